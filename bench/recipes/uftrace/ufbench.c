/*
 * Workload for the large uftrace benchmark recording (bench/bench-uftrace.sh):
 * many short -pg functions (a recursion, a call chain, a callback from qsort),
 * in several threads, with a few libc calls.
 *
 * usage: ufbench ROUNDS THREADS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long rounds = 1000;

int tree(int depth)
{
	return depth <= 0 ? 1 : tree(depth - 1) + tree(depth - 2);
}

static int step3(int x) { return x ^ 0x55; }
static int step2(int x) { return step3(x) + 1; }
int step1(int x) { return step2(x) * 2; }

static int order(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

long one_round(long i)
{
	int v[6];
	long s = tree(7);

	for (int k = 0; k < 6; k++)
		v[k] = (int)((i * 31 + k * 17) % 23);
	qsort(v, 6, sizeof(int), order);
	s += step1((int)i) + v[0];
	return s;
}

void *worker(void *arg)
{
	long sum = (long)arg;

	for (long i = 0; i < rounds; i++)
		sum += one_round(i);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t[16];
	long total = 0;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (nthreads < 1 || nthreads > 16)
		nthreads = 2;
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("total %ld\n", total);
	return 0;
}
