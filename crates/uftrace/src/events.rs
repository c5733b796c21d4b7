//! Event ids and names (`events.txt`, builtin and perf events).

/// uftrace event ids.
pub mod id {
    pub const BUILTIN: u32 = 100_000;
    pub const READ_PROC_STATM: u32 = 100_001;
    pub const READ_PAGE_FAULT: u32 = 100_002;
    pub const DIFF_PROC_STATM: u32 = 100_003;
    pub const DIFF_PAGE_FAULT: u32 = 100_004;
    pub const READ_PMU_CYCLE: u32 = 100_005;
    pub const DIFF_PMU_CYCLE: u32 = 100_006;
    pub const READ_PMU_CACHE: u32 = 100_007;
    pub const DIFF_PMU_CACHE: u32 = 100_008;
    pub const READ_PMU_BRANCH: u32 = 100_009;
    pub const DIFF_PMU_BRANCH: u32 = 100_010;
    pub const WATCH_CPU: u32 = 100_011;
    pub const PERF: u32 = 200_000;
    pub const PERF_SCHED_IN: u32 = 200_001;
    pub const PERF_SCHED_OUT: u32 = 200_002;
    pub const PERF_SCHED_BOTH: u32 = 200_003;
    pub const PERF_TASK: u32 = 200_004;
    pub const PERF_EXIT: u32 = 200_005;
    pub const PERF_COMM: u32 = 200_006;
    pub const PERF_SCHED_OUT_PREEMPT: u32 = 200_007;
    pub const PERF_SCHED_BOTH_PREEMPT: u32 = 200_008;
    pub const USER: u32 = 1_000_000;
    pub const EXTERN_DATA: u32 = 2_000_000;
}

/// Whether `addr` is one of the schedule event ids.
pub fn is_sched_event(addr: u64) -> bool {
    matches!(
        u32::try_from(addr).unwrap_or(0),
        id::PERF_SCHED_IN
            | id::PERF_SCHED_OUT
            | id::PERF_SCHED_OUT_PREEMPT
            | id::PERF_SCHED_BOTH
            | id::PERF_SCHED_BOTH_PREEMPT
    )
}

/// User events declared in `events.txt` (`EVENT: <id> <provider>:<event>`).
#[derive(Debug, Clone, Default)]
pub struct UserEvents {
    pub events: Vec<(u32, String)>,
}

impl UserEvents {
    pub fn parse(text: &str) -> UserEvents {
        let mut out = UserEvents::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("EVENT") else {
                continue;
            };
            let rest = rest.get(2..).unwrap_or("");
            let mut it = rest.split_ascii_whitespace();
            let (Some(id), Some(name)) = (it.next(), it.next()) else {
                continue;
            };
            let Ok(id) = id.parse::<u32>() else { continue };
            if !name.contains(':') {
                continue;
            }
            out.events.push((id, name.to_string()));
        }
        out
    }

    /// The name uftrace prints for event `id` (kernel events: `None`).
    pub fn name(&self, id: u32) -> Option<std::borrow::Cow<'_, str>> {
        use std::borrow::Cow;
        if id == id::EXTERN_DATA {
            return Some(Cow::Borrowed("external-data"));
        }
        if id >= id::USER {
            return Some(match self.events.iter().find(|(i, _)| *i == id) {
                Some((_, n)) => Cow::Borrowed(n.as_str()),
                None => Cow::Owned(format!("user_event:{id}")),
            });
        }
        if id >= id::PERF {
            return Some(Cow::Borrowed(match id {
                id::PERF_SCHED_IN => "linux:sched-in",
                id::PERF_SCHED_OUT => "linux:sched-out",
                id::PERF_SCHED_OUT_PREEMPT => "linux:sched-out (pre-empted)",
                id::PERF_SCHED_BOTH => "linux:schedule",
                id::PERF_SCHED_BOTH_PREEMPT => "linux:schedule (pre-empted)",
                id::PERF_TASK => "linux:task-new",
                id::PERF_EXIT => "linux:task-exit",
                id::PERF_COMM => "linux:task-name",
                _ => "linux:unknown",
            }));
        }
        if id >= id::BUILTIN {
            return Some(Cow::Owned(match id {
                id::READ_PROC_STATM => "read:proc/statm".into(),
                id::READ_PAGE_FAULT => "read:page-fault".into(),
                id::READ_PMU_CYCLE => "read:pmu-cycle".into(),
                id::READ_PMU_CACHE => "read:pmu-cache".into(),
                id::READ_PMU_BRANCH => "read:pmu-branch".into(),
                id::DIFF_PROC_STATM => "diff:proc/statm".into(),
                id::DIFF_PAGE_FAULT => "diff:page-fault".into(),
                id::DIFF_PMU_CYCLE => "diff:pmu-cycle".into(),
                id::DIFF_PMU_CACHE => "diff:pmu-cache".into(),
                id::DIFF_PMU_BRANCH => "diff:pmu-branch".into(),
                id::WATCH_CPU => "watch:cpu".into(),
                _ => format!("builtin_event:{id}"),
            }));
        }
        None
    }
}
