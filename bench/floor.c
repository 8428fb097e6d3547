/* The floor the hook is timed beside: the least a durable hook can do. Reads stdin to EOF,
 * appends it to the file named by argv[1] and fsyncs it, then exits 0. Compiled by
 * `bench/hook.rs` with the system `cc -O2`; no hookjournal code runs here, so the floor does not
 * grow with our own start-up. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    static char buf[1 << 16];
    char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0) return 1;
        if (n == 0) break;
        if (len + (size_t)n > cap) {
            cap = (len + (size_t)n) * 2;
            data = realloc(data, cap);
            if (!data) return 1;
        }
        for (ssize_t i = 0; i < n; i++) data[len + i] = buf[i];
        len += (size_t)n;
    }
    int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return 1;
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        if (n <= 0) return 1;
        off += (size_t)n;
    }
    if (fsync(fd) != 0) return 1;
    return close(fd) != 0;
}
