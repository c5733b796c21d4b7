//! The numbers of perf.data: record types, `sample_type` and `read_format`
//! bits, feature section ids, with the names perf prints for them
//! (`perf report -D`, `perf report --header-only`).

/// Kernel record types (`enum perf_event_type`).
pub mod rec {
    pub const MMAP: u32 = 1;
    pub const LOST: u32 = 2;
    pub const COMM: u32 = 3;
    pub const EXIT: u32 = 4;
    pub const THROTTLE: u32 = 5;
    pub const UNTHROTTLE: u32 = 6;
    pub const FORK: u32 = 7;
    pub const READ: u32 = 8;
    pub const SAMPLE: u32 = 9;
    pub const MMAP2: u32 = 10;
    pub const AUX: u32 = 11;
    pub const ITRACE_START: u32 = 12;
    pub const LOST_SAMPLES: u32 = 13;
    pub const SWITCH: u32 = 14;
    pub const SWITCH_CPU_WIDE: u32 = 15;
    pub const NAMESPACES: u32 = 16;
    pub const KSYMBOL: u32 = 17;
    pub const BPF_EVENT: u32 = 18;
    pub const CGROUP: u32 = 19;
    pub const TEXT_POKE: u32 = 20;
    pub const AUX_OUTPUT_HW_ID: u32 = 21;
    // perf's own ("user") record types
    pub const HEADER_ATTR: u32 = 64;
    pub const HEADER_EVENT_TYPE: u32 = 65;
    pub const HEADER_TRACING_DATA: u32 = 66;
    pub const HEADER_BUILD_ID: u32 = 67;
    pub const FINISHED_ROUND: u32 = 68;
    pub const ID_INDEX: u32 = 69;
    pub const AUXTRACE_INFO: u32 = 70;
    pub const AUXTRACE: u32 = 71;
    pub const AUXTRACE_ERROR: u32 = 72;
    pub const THREAD_MAP: u32 = 73;
    pub const CPU_MAP: u32 = 74;
    pub const STAT_CONFIG: u32 = 75;
    pub const STAT: u32 = 76;
    pub const STAT_ROUND: u32 = 77;
    pub const EVENT_UPDATE: u32 = 78;
    pub const TIME_CONV: u32 = 79;
    pub const HEADER_FEATURE: u32 = 80;
    pub const COMPRESSED: u32 = 81;
    pub const FINISHED_INIT: u32 = 82;
    pub const COMPRESSED2: u32 = 83;
}

/// perf's name of a record type, as `perf report -D` prints it
/// (`PERF_RECORD_<name>`); `None` for a type perf does not know.
pub fn record_name(t: u32) -> Option<&'static str> {
    use rec::*;
    Some(match t {
        MMAP => "MMAP",
        LOST => "LOST",
        COMM => "COMM",
        EXIT => "EXIT",
        THROTTLE => "THROTTLE",
        UNTHROTTLE => "UNTHROTTLE",
        FORK => "FORK",
        READ => "READ",
        SAMPLE => "SAMPLE",
        MMAP2 => "MMAP2",
        AUX => "AUX",
        ITRACE_START => "ITRACE_START",
        LOST_SAMPLES => "LOST_SAMPLES",
        SWITCH => "SWITCH",
        SWITCH_CPU_WIDE => "SWITCH_CPU_WIDE",
        NAMESPACES => "NAMESPACES",
        KSYMBOL => "KSYMBOL",
        BPF_EVENT => "BPF_EVENT",
        CGROUP => "CGROUP",
        TEXT_POKE => "TEXT_POKE",
        AUX_OUTPUT_HW_ID => "AUX_OUTPUT_HW_ID",
        HEADER_ATTR => "ATTR",
        HEADER_EVENT_TYPE => "EVENT_TYPE",
        HEADER_TRACING_DATA => "TRACING_DATA",
        HEADER_BUILD_ID => "BUILD_ID",
        FINISHED_ROUND => "FINISHED_ROUND",
        ID_INDEX => "ID_INDEX",
        AUXTRACE_INFO => "AUXTRACE_INFO",
        AUXTRACE => "AUXTRACE",
        AUXTRACE_ERROR => "AUXTRACE_ERROR",
        THREAD_MAP => "THREAD_MAP",
        CPU_MAP => "CPU_MAP",
        STAT_CONFIG => "STAT_CONFIG",
        STAT => "STAT",
        STAT_ROUND => "STAT_ROUND",
        EVENT_UPDATE => "EVENT_UPDATE",
        TIME_CONV => "TIME_CONV",
        HEADER_FEATURE => "FEATURE",
        COMPRESSED => "COMPRESSED",
        FINISHED_INIT => "FINISHED_INIT",
        COMPRESSED2 => "COMPRESSED2",
        _ => return None,
    })
}

/// `sample_type` bits (`enum perf_event_sample_format`).
pub mod sample {
    pub const IP: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const TIME: u64 = 1 << 2;
    pub const ADDR: u64 = 1 << 3;
    pub const READ: u64 = 1 << 4;
    pub const CALLCHAIN: u64 = 1 << 5;
    pub const ID: u64 = 1 << 6;
    pub const CPU: u64 = 1 << 7;
    pub const PERIOD: u64 = 1 << 8;
    pub const STREAM_ID: u64 = 1 << 9;
    pub const RAW: u64 = 1 << 10;
    pub const BRANCH_STACK: u64 = 1 << 11;
    pub const REGS_USER: u64 = 1 << 12;
    pub const STACK_USER: u64 = 1 << 13;
    pub const WEIGHT: u64 = 1 << 14;
    pub const DATA_SRC: u64 = 1 << 15;
    pub const IDENTIFIER: u64 = 1 << 16;
    pub const TRANSACTION: u64 = 1 << 17;
    pub const REGS_INTR: u64 = 1 << 18;
    pub const PHYS_ADDR: u64 = 1 << 19;
    pub const AUX: u64 = 1 << 20;
    pub const CGROUP: u64 = 1 << 21;
    pub const DATA_PAGE_SIZE: u64 = 1 << 22;
    pub const CODE_PAGE_SIZE: u64 = 1 << 23;
    pub const WEIGHT_STRUCT: u64 = 1 << 24;

    /// The names perf prints for the bits, in bit order
    /// (`perf evlist -v`'s `sample_type`).
    pub const NAMES: [&str; 25] = [
        "IP",
        "TID",
        "TIME",
        "ADDR",
        "READ",
        "CALLCHAIN",
        "ID",
        "CPU",
        "PERIOD",
        "STREAM_ID",
        "RAW",
        "BRANCH_STACK",
        "REGS_USER",
        "STACK_USER",
        "WEIGHT",
        "DATA_SRC",
        "IDENTIFIER",
        "TRANSACTION",
        "REGS_INTR",
        "PHYS_ADDR",
        "AUX",
        "CGROUP",
        "DATA_PAGE_SIZE",
        "CODE_PAGE_SIZE",
        "WEIGHT_STRUCT",
    ];
}

/// `read_format` bits.
pub mod read {
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    pub const ID: u64 = 1 << 2;
    pub const GROUP: u64 = 1 << 3;
    pub const LOST: u64 = 1 << 4;
    pub const NAMES: [&str; 5] = [
        "TOTAL_TIME_ENABLED",
        "TOTAL_TIME_RUNNING",
        "ID",
        "GROUP",
        "LOST",
    ];
}

/// Feature section ids (`HEADER_*` of perf's header.h), in bit order.
pub mod feat {
    pub const TRACING_DATA: u32 = 1;
    pub const BUILD_ID: u32 = 2;
    pub const HOSTNAME: u32 = 3;
    pub const OSRELEASE: u32 = 4;
    pub const VERSION: u32 = 5;
    pub const ARCH: u32 = 6;
    pub const NRCPUS: u32 = 7;
    pub const CPUDESC: u32 = 8;
    pub const CPUID: u32 = 9;
    pub const TOTAL_MEM: u32 = 10;
    pub const CMDLINE: u32 = 11;
    pub const EVENT_DESC: u32 = 12;
    pub const CPU_TOPOLOGY: u32 = 13;
    pub const NUMA_TOPOLOGY: u32 = 14;
    pub const BRANCH_STACK: u32 = 15;
    pub const PMU_MAPPINGS: u32 = 16;
    pub const GROUP_DESC: u32 = 17;
    pub const AUXTRACE: u32 = 18;
    pub const STAT: u32 = 19;
    pub const CACHE: u32 = 20;
    pub const SAMPLE_TIME: u32 = 21;
    pub const MEM_TOPOLOGY: u32 = 22;
    pub const CLOCKID: u32 = 23;
    pub const DIR_FORMAT: u32 = 24;
    pub const BPF_PROG_INFO: u32 = 25;
    pub const BPF_BTF: u32 = 26;
    pub const COMPRESSED: u32 = 27;
    pub const CPU_PMU_CAPS: u32 = 28;
    pub const CLOCK_DATA: u32 = 29;
    pub const HYBRID_TOPOLOGY: u32 = 30;
    pub const PMU_CAPS: u32 = 31;

    /// The lower-case names perf gives the features.
    pub fn name(id: u32) -> Option<&'static str> {
        const N: [&str; 32] = [
            "reserved",
            "trace_info",
            "build_id",
            "hostname",
            "osrelease",
            "version",
            "arch",
            "nrcpus",
            "cpudesc",
            "cpuid",
            "total_mem",
            "cmdline",
            "event_desc",
            "cpu_topology",
            "numa_topology",
            "branch_stack",
            "pmu_mappings",
            "group_desc",
            "auxtrace",
            "stat",
            "cache",
            "sample_time",
            "mem_topology",
            "clockid",
            "dir_format",
            "bpf_prog_info",
            "bpf_btf",
            "compressed",
            "cpu_pmu_caps",
            "clock_data",
            "hybrid_topology",
            "pmu_caps",
        ];
        N.get(id as usize).copied()
    }
}

/// `perf_event_header.misc` bits.
pub mod misc {
    pub const CPUMODE_MASK: u16 = 7;
    pub const CPUMODE_UNKNOWN: u16 = 0;
    pub const KERNEL: u16 = 1;
    pub const USER: u16 = 2;
    pub const HYPERVISOR: u16 = 3;
    pub const GUEST_KERNEL: u16 = 4;
    pub const GUEST_USER: u16 = 5;
    /// On MMAP/MMAP2: a data (non-executable) mapping.
    pub const MMAP_DATA: u16 = 1 << 13;
    /// On COMM: the comm changed by exec.
    pub const COMM_EXEC: u16 = 1 << 13;
    /// On SWITCH: switched out (else in).
    pub const SWITCH_OUT: u16 = 1 << 13;
    /// On MMAP2: the build id replaces maj/min/ino.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// On SWITCH out: the task was preempted (still runnable).
    pub const SWITCH_OUT_PREEMPT: u16 = 1 << 14;
    pub const EXACT_IP: u16 = 1 << 14;
}

/// The callchain context markers (`enum perf_callchain_context`): entries
/// of a callchain at or above this value are markers, not addresses.
pub const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
pub const PERF_CONTEXT_HV: u64 = -32i64 as u64;
pub const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
pub const PERF_CONTEXT_USER: u64 = -512i64 as u64;
pub const PERF_CONTEXT_GUEST_KERNEL: u64 = -2176i64 as u64;
pub const PERF_CONTEXT_GUEST_USER: u64 = -2560i64 as u64;

/// `perf_event_attr.type` values.
pub mod attr_type {
    pub const HARDWARE: u32 = 0;
    pub const SOFTWARE: u32 = 1;
    pub const TRACEPOINT: u32 = 2;
    pub const HW_CACHE: u32 = 3;
    pub const RAW: u32 = 4;
    pub const BREAKPOINT: u32 = 5;
}
