/* The physical limit for 4 KiB random page-cached reads: a bare pread loop at
 * xorshift offsets with no timing and no statistics. bench/io-vs-fio.sh
 * compares fslab's sync engine against it.
 * usage: pread_loop FILE SECONDS [BS]  -> prints "ops_per_sec N" */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s FILE SECONDS [BS]\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) { perror(argv[1]); return 1; }
    struct stat st;
    fstat(fd, &st);
    double secs = atof(argv[2]);
    size_t bs = argc > 3 ? (size_t)atol(argv[3]) : 4096;
    uint64_t blocks = st.st_size / bs;
    static char buf[1 << 20] __attribute__((aligned(4096)));
    uint64_t x = 88172645463325252ull, ops = 0;
    double t0 = now(), end = t0 + secs;
    for (;;) {
        /* check the clock every 4096 reads only: the loop must cost nothing */
        for (int i = 0; i < 4096; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if (pread(fd, buf, bs, (x % blocks) * bs) != (ssize_t)bs) { perror("pread"); return 1; }
        }
        ops += 4096;
        if (now() >= end) break;
    }
    printf("ops_per_sec %.0f\n", ops / (now() - t0));
    return 0;
}
