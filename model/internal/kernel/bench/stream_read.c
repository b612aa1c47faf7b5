// Measures the read bandwidth a decode step can get from memory on 1 and 2
// threads: a 1 GiB buffer (four times an L3 of 260 MiB, so nothing of one pass
// is left in cache for the next) read with 512-bit loads, as the mat-vec
// kernels read their weights. Each thread reads its own contiguous half (or
// all of it alone), the split the pool gives a mat-vec. The loops: plain
// loads into eight accumulators, the same with PREFETCHT0 7 KiB ahead, and
// the bf16 kernel's access pattern (rows4BF16AVX512): four rows of a
// 896-column bf16 weight (1,792 bytes apart) read side by side, 64 bytes of
// each at a time, with none, the next group of four rows, or the group two
// or four ahead prefetched at the pace of the reads. Only the loads: no
// widening or FMAs, so these are what memory gives, not what a kernel
// reaches. Per loop and thread count it prints the best of PASSES passes as
// GB/s of wall time, and as GB per CPU-second of each thread summed (the
// rate had every thread run throughout: on a shared machine the wall figure
// drops when another process takes a CPU; with two threads the CPU-time
// figure overstates, since threads that take turns each get the bandwidth of
// one).
//
// Build and run (x86-64 with AVX-512):
//
//	gcc -O2 -pthread -o /tmp/stream_read model/internal/kernel/bench/stream_read.c && /tmp/stream_read
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#pragma GCC target("avx512f")

#define BYTES (1L << 30)
#define PASSES 10
#define ROW 1792 // one row of a 896-column bf16 weight
#define GROUP (4 * ROW)

typedef double (*reader)(const char *p, long n);

// plain sums n bytes (a multiple of 512) with eight accumulators.
static double plain(const char *p, long n) {
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
	for (long i = 0; i < n; i += 512) {
		a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
		a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 64));
		a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 128));
		a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 192));
		a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 256));
		a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 320));
		a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 384));
		a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 448));
	}
	a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
			   _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
	return _mm512_reduce_add_ps(a0);
}

// prefetched is plain with PREFETCHT0 of the bytes one GROUP ahead.
static double prefetched(const char *p, long n) {
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
	for (long i = 0; i < n; i += 512) {
		for (int j = 0; j < 512; j += 64)
			_mm_prefetch(p + i + GROUP + j, _MM_HINT_T0);
		a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
		a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 64));
		a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 128));
		a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 192));
		a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 256));
		a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 320));
		a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 384));
		a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 448));
	}
	a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
			   _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
	return _mm512_reduce_add_ps(a0);
}

// rows4 reads n bytes (a multiple of GROUP) as the bf16 kernel does: groups
// of four rows, the four rows 64 bytes at a time side by side, and the
// group ahead bytes further (0: none) prefetched at the pace of the reads.
static double rows4(const char *p, long n, long ahead) {
	__m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	for (long g = 0; g < n; g += GROUP) {
		const char *r = p + g, *next = p + g + ahead;
		for (long i = 0; i < ROW; i += 64, next += 256) {
			if (ahead) {
				_mm_prefetch(next, _MM_HINT_T0);
				_mm_prefetch(next + 64, _MM_HINT_T0);
				_mm_prefetch(next + 128, _MM_HINT_T0);
				_mm_prefetch(next + 192, _MM_HINT_T0);
			}
			a0 = _mm512_add_ps(a0, _mm512_load_ps(r + i));
			a1 = _mm512_add_ps(a1, _mm512_load_ps(r + ROW + i));
			a2 = _mm512_add_ps(a2, _mm512_load_ps(r + 2 * ROW + i));
			a3 = _mm512_add_ps(a3, _mm512_load_ps(r + 3 * ROW + i));
		}
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

static double rows4None(const char *p, long n) { return rows4(p, n, 0); }
static double rows4Next(const char *p, long n) { return rows4(p, n, GROUP); }
static double rows4Two(const char *p, long n) { return rows4(p, n, 2 * GROUP); }
static double rows4Four(const char *p, long n) { return rows4(p, n, 4 * GROUP); }

struct job {
	reader read;
	const char *p;
	long n;
	double sum;
};

static void *run(void *arg) {
	struct job *j = arg;
	j->sum = j->read(j->p, j->n);
	return NULL;
}

static double now(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void) {
	char *buf = aligned_alloc(4096, BYTES);
	if (!buf) {
		fprintf(stderr, "stream_read: cannot allocate %ld bytes\n", BYTES);
		return 1;
	}
	// Small non-zero floats, so the sums stay finite; touching every page
	// also takes the page faults out of the timed passes.
	for (long i = 0; i < BYTES; i += 4)
		*(float *)(buf + i) = 1e-6f;
	struct {
		const char *name;
		reader read;
	} loops[] = {
		{"plain loads", plain},
		{"plain, prefetch 7 KiB ahead", prefetched},
		{"4 rows, no prefetch", rows4None},
		{"4 rows, prefetch next 4", rows4Next},
		{"4 rows, prefetch 2 groups", rows4Two},
		{"4 rows, prefetch 4 groups", rows4Four},
	};
	int nloops = sizeof loops / sizeof loops[0];
	double sink = 0;
	printf("%-28s %7s %12s %16s\n", "loop", "threads", "GB/s (wall)", "GB/s (cpu time)");
	for (int l = 0; l < nloops; l++) {
		for (int threads = 1; threads <= 2; threads++) {
			double best = 0, bestCPU = 0;
			for (int pass = 0; pass < PASSES; pass++) {
				struct job jobs[2];
				pthread_t th;
				long share = BYTES / threads / GROUP * GROUP;
				for (int t = 0; t < threads; t++)
					jobs[t] = (struct job){loops[l].read, buf + t * share, share, 0};
				double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
				if (threads == 2)
					pthread_create(&th, NULL, run, &jobs[1]);
				run(&jobs[0]);
				if (threads == 2)
					pthread_join(th, NULL);
				double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
				double bytes = (double)threads * share;
				if (bytes / wall / 1e9 > best)
					best = bytes / wall / 1e9;
				// Each thread's bytes over its own running time, summed:
				// the rate had both run all along.
				if (threads * bytes / cpu / 1e9 > bestCPU)
					bestCPU = threads * bytes / cpu / 1e9;
				for (int t = 0; t < threads; t++)
					sink += jobs[t].sum;
			}
			printf("%-28s %7d %12.1f %16.1f\n", loops[l].name, threads, best, bestCPU);
		}
	}
	return sink == 0; // keeps the sums live
}
