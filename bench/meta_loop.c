/* The physical limit for bonnie++-style metadata: a bare loop of the same
 * syscalls fslab meta issues, with no timing per file and no statistics.
 *   meta_loop DIR FILES DIRS SIZE
 * creates FILES files (open O_CREAT|O_EXCL|O_WRONLY + write SIZE + close)
 * spread over DIRS directories, stats them in random order (reading the data
 * back when SIZE > 0, as bonnie++ and fslab do), unlinks them, and
 * prints "create_per_sec N" and "random_stat_per_sec N". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s DIR FILES DIRS SIZE\n", argv[0]);
        return 2;
    }
    const char *base = argv[1];
    long files = atol(argv[2]), dirs = atol(argv[3]);
    size_t size = (size_t)atol(argv[4]);
    static char buf[1 << 16];
    memset(buf, 'x', sizeof buf);
    int *dfd = calloc(dirs, sizeof(int));
    char p[4096];
    for (long d = 0; d < dirs; d++) {
        snprintf(p, sizeof p, "%s/%05ld", base, d);
        mkdir(p, 0755);
        dfd[d] = open(p, O_RDONLY | O_DIRECTORY);
        if (dfd[d] < 0) { perror(p); return 1; }
    }
    char name[64];
    double t0 = now();
    for (long i = 0; i < files; i++) {
        long d = i * dirs / files;
        snprintf(name, sizeof name, "%010ld", i);
        int fd = openat(dfd[d], name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) { perror("openat"); return 1; }
        if (size && write(fd, buf, size) != (ssize_t)size) { perror("write"); return 1; }
        close(fd);
    }
    syncfs(dfd[0]); /* inside the create time, as fslab meta does (bonnie++: sync()) */
    double t1 = now();
    long *order = malloc(files * sizeof(long));
    for (long i = 0; i < files; i++) order[i] = i;
    uint64_t x = 88172645463325252ull;
    for (long i = files - 1; i > 0; i--) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        long j = x % (i + 1), t = order[i]; order[i] = order[j]; order[j] = t;
    }
    struct stat st;
    double t2 = now();
    for (long k = 0; k < files; k++) {
        long i = order[k], d = i * dirs / files;
        snprintf(name, sizeof name, "%010ld", i);
        if (fstatat(dfd[d], name, &st, 0)) { perror("fstatat"); return 1; }
        if (st.st_size) { /* bonnie++ reads the data in its random stat too */
            int fd = openat(dfd[d], name, O_RDONLY | O_CLOEXEC);
            size_t want = (size_t)st.st_size < sizeof buf ? (size_t)st.st_size : sizeof buf;
            if (fd < 0 || read(fd, buf, want) != (ssize_t)want) { perror("read"); return 1; }
            close(fd);
        }
    }
    double t3 = now();
    for (long i = 0; i < files; i++) {
        snprintf(name, sizeof name, "%010ld", i);
        unlinkat(dfd[i * dirs / files], name, 0);
    }
    for (long d = 0; d < dirs; d++) {
        snprintf(p, sizeof p, "%s/%05ld", base, d);
        rmdir(p);
    }
    printf("create_per_sec %.0f\nrandom_stat_per_sec %.0f\n", files / (t1 - t0), files / (t3 - t2));
    return 0;
}
