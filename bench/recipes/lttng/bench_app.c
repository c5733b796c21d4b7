/*
 * Emits the "bench" tracepoints (bench_tp.h) from several threads:
 * ROUNDS rounds per thread, each round one event of every kind (9 events).
 *
 * usage: bench_app ROUNDS THREADS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tp.h"

static unsigned long rounds = 1000;

static const char *const words[] = { "alpha", "bravo", "charlie", "delta", "echo-foxtrot" };
static const char *const utf8s[] = { "Gr\xc3\xbc\xc3\x9f" "e", "\xce\xb1\xce\xb2\xce\xb3",
				     "\xe2\x9c\x93 ok", "caf\xc3\xa9" };

static void *run(void *arg)
{
	int id = (int)(long)arg;
	uint32_t vals[8];
	char tag[8];

	for (unsigned long i = 0; i < rounds; i++) {
		uint64_t n = i * 4 + (uint64_t)id;
		unsigned int len = (unsigned int)(i % 5);

		for (int k = 0; k < 8; k++)
			vals[k] = (uint32_t)(n * (k + 1) * 2246822519u);
		snprintf(tag, sizeof(tag), "t%05lu", i % 100000);

		lttng_ust_tracepoint(bench, integers, n);
		lttng_ust_tracepoint(bench, text, words[i % 5], utf8s[i % 4]);
		lttng_ust_tracepoint(bench, fixed_arrays, (const int16_t *)vals, tag);
		lttng_ust_tracepoint(bench, var_sequences, vals, len, tag, (size_t)(i % 7));
		lttng_ust_tracepoint(bench, states, (int)(i % 14) - 3, (int)(i % 11));
		lttng_ust_tracepoint(bench, reals, (float)n / 8.0f, (double)n * -0.125);
		lttng_ust_tracepoint(bench, nothing);
		lttng_ust_tracepoint(bench, beat, id, i);
		lttng_ust_tracepoint(bench, integers, n ^ 0xffff);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t[16];

	if (argc > 1)
		rounds = strtoul(argv[1], NULL, 10);
	if (nthreads < 1 || nthreads > 16)
		nthreads = 2;
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
