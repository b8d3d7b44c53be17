/* Prints what fstat, isatty and lseek say about standard input and about a file it opens
   (argv[1]), and what it reads from both: run plain and under `irs run`, the output must be
   the same. A pipe's times change with every write, so only a regular file's are printed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m) {
    if (S_ISREG(m)) return "file";
    if (S_ISFIFO(m)) return "fifo";
    if (S_ISCHR(m)) return "chardev";
    if (S_ISSOCK(m)) return "socket";
    if (S_ISDIR(m)) return "dir";
    return "other";
}

static void describe(const char *what, int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) {
        printf("%s: fstat fails (%s)\n", what, strerror(errno));
        return;
    }
    printf("%s: %s isatty=%d", what, kind(st.st_mode), isatty(fd));
    errno = 0;
    off_t end = lseek(fd, 0, SEEK_END);
    printf(" lseek_end=%lld(%s)", (long long)end, end < 0 ? strerror(errno) : "ok");
    if (end >= 0) lseek(fd, 0, SEEK_SET);
    if (S_ISREG(st.st_mode))
        printf(" size=%lld mode=%o ino=%llu nlink=%lu uid=%u mtime=%lld.%09ld", (long long)st.st_size, (unsigned)(st.st_mode & 07777),
               (unsigned long long)st.st_ino, (unsigned long)st.st_nlink, (unsigned)st.st_uid, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (S_ISCHR(st.st_mode)) printf(" rdev=%llu", (unsigned long long)st.st_rdev);
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n < 0) n = 0;
    buf[n] = 0;
    printf(" read=%zd:%s\n", n, buf);
}

int main(int argc, char **argv) {
    describe("stdin", 0);
    if (argc > 1) {
        int fd = open(argv[1], O_RDONLY);
        if (fd < 0) {
            printf("file: cannot open (%s)\n", strerror(errno));
            return 1;
        }
        describe("file", fd);
        close(fd);
    }
    return 0;
}
