/*
 * LTTng-UST tracepoint provider "bench" for the large CTF benchmark trace
 * (bench/bench-ctf.sh). One event per kind of CTF field LTTng-UST writes:
 * integers of every size and signedness, hex and network byte order
 * integers, char, long, strings (ASCII, UTF-8, empty), static arrays
 * (integer, hex, text, network), sequences with several length types,
 * text sequences, enumerations (plain values, a range, an automatic value,
 * a negative value; int and int8 containers), float and double, an event
 * without fields, and an event with a log level.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench_tp.h"

#if !defined(BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_TP_H

#include <lttng/tracepoint.h>
#include <stddef.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_ENUM(bench, state,
	LTTNG_UST_TP_ENUM_VALUES(
		lttng_ust_field_enum_value("IDLE", 0)
		lttng_ust_field_enum_value("BUSY", 1)
		lttng_ust_field_enum_range("WAITING", 2, 9)
		lttng_ust_field_enum_auto("AFTER_WAITING")
		lttng_ust_field_enum_value("FAILED", -3)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, integers,
	LTTNG_UST_TP_ARGS(uint64_t, n),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int8_t, s8, (int8_t)(n * 7))
		lttng_ust_field_integer(uint8_t, u8, (uint8_t)n)
		lttng_ust_field_integer(int16_t, s16, (int16_t)(n * 131))
		lttng_ust_field_integer(uint16_t, u16, (uint16_t)(n * 3))
		lttng_ust_field_integer(int32_t, s32, (int32_t)(n * 100003))
		lttng_ust_field_integer(uint32_t, u32, (uint32_t)(n * 2654435761u))
		lttng_ust_field_integer(int64_t, s64, -(int64_t)(n * 1000000007))
		lttng_ust_field_integer(uint64_t, u64, n * 0x9e3779b97f4a7c15ull)
		lttng_ust_field_integer_hex(uint16_t, h16, (uint16_t)(n ^ 0xbeef))
		lttng_ust_field_integer_hex(uint64_t, h64, n << 20)
		lttng_ust_field_integer_network(int32_t, be32, (int32_t)n - 5000)
		lttng_ust_field_integer_network_hex(uint64_t, be64_hex, n * 0x10001)
		lttng_ust_field_integer(char, letter, (char)('a' + n % 26))
		lttng_ust_field_integer(long, as_long, (long)n - 1000000)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, text,
	LTTNG_UST_TP_ARGS(const char *, word, const char *, utf8),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_string(word, word)
		lttng_ust_field_string(utf8, utf8)
		lttng_ust_field_string(nothing, "")
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, fixed_arrays,
	LTTNG_UST_TP_ARGS(const int16_t *, v, const char *, tag),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_array(int16_t, a_s16, v, 3)
		lttng_ust_field_array_hex(uint8_t, a_hex8, (const uint8_t *)v, 6)
		lttng_ust_field_array_text(char, a_text, tag, 6)
		lttng_ust_field_array_network(uint32_t, a_be32, (const uint32_t *)v, 1)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, var_sequences,
	LTTNG_UST_TP_ARGS(const uint32_t *, v, unsigned int, n, const char *, s, size_t, sn),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_sequence(uint32_t, q_u32, v, unsigned int, n)
		lttng_ust_field_sequence_hex(uint16_t, q_hex16, (const uint16_t *)v, uint8_t, n)
		lttng_ust_field_sequence_text(char, q_text, s, size_t, sn)
		lttng_ust_field_sequence_network(int16_t, q_be16, (const int16_t *)v, uint16_t, n)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, states,
	LTTNG_UST_TP_ARGS(int, a, int, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_enum(bench, state, int, st, a)
		lttng_ust_field_enum(bench, state, int8_t, st8, b)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, reals,
	LTTNG_UST_TP_ARGS(float, f, double, d),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_float(float, r32, f)
		lttng_ust_field_float(double, r64, d)
		lttng_ust_field_float(double, r64_inv, d != 0 ? 1.0 / d : 0.0)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(bench, nothing,
	LTTNG_UST_TP_ARGS(),
	LTTNG_UST_TP_FIELDS()
)

LTTNG_UST_TRACEPOINT_EVENT(bench, beat,
	LTTNG_UST_TP_ARGS(int, worker, uint64_t, round),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, worker, worker)
		lttng_ust_field_integer(uint64_t, round, round)
	)
)
LTTNG_UST_TRACEPOINT_LOGLEVEL(bench, beat, LTTNG_UST_TRACEPOINT_LOGLEVEL_INFO)

#endif /* BENCH_TP_H */

#include <lttng/tracepoint-event.h>
