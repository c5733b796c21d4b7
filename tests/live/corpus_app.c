/* LTTng-UST corpus generator.  usage: corpus_app [loops] [threads] [pause_us]
 * (tests/live's copy: pause_us, microseconds slept after each main-loop
 * iteration, keeps the application alive while a live viewer follows it) 
 * Build: gcc -O1 -o corpus_app corpus_app.c corpus_tp.c -I. -llttng-ust -ldl -lpthread */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include "corpus_tp.h"

static long loops = 100;

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (long i = 0; i < loops; i++) {
		lttng_ust_tracepoint(corpus, thread_tick, id, (uint64_t)i);
		if (i % 64 == 0)
			usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	loops = argc > 1 ? atol(argv[1]) : 100;
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	long pause_us = argc > 3 ? atol(argv[3]) : 0;
	pthread_t th[16];
	if (nthreads > 16) nthreads = 16;
	for (int t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, worker, (void *)(long)t);

	for (long i = 0; i < loops; i++) {
		int32_t a[4] = { (int32_t)i, -(int32_t)i, 0x7fffffff, -0x7fffffff - 1 };
		uint8_t bytes[8] = { 0, 1, 0x7f, 0x80, 0xff, (uint8_t)i, 0xaa, 0x55 };
		int64_t v[5] = { i, -i, INT64_MAX, INT64_MIN, 42 };
		char sbuf[64];
		snprintf(sbuf, sizeof(sbuf), "iteration %ld \"quoted\" \\ tab\tend", i);
		lttng_ust_tracepoint(corpus, ints, (int8_t)(i - 128), (uint8_t)i, (int16_t)(-i * 100),
				     (uint16_t)(i * 300), (int32_t)(-i * 100000), (uint32_t)(i * 4000000u),
				     (int64_t)(-i * 10000000000LL), (uint64_t)i * 0x9e3779b97f4a7c15ULL);
		lttng_ust_tracepoint(corpus, strings, sbuf, "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93");
		lttng_ust_tracepoint(corpus, arrays, a, bytes, "ABCDEFGH");
		lttng_ust_tracepoint(corpus, sequences, v, (unsigned int)(i % 6), "seqtext-abc", (size_t)(i % 12));
		lttng_ust_tracepoint(corpus, enums, (int)(i % 25) - 5, (int)(i % 3));
		lttng_ust_tracepoint(corpus, floats, (float)i / 3.0f, (double)i * 3.14159265358979);
		lttng_ust_tracepoint(corpus, empty);
		if (pause_us > 0)
			usleep(pause_us);
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	return 0;
}
