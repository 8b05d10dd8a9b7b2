/* stallfs DIR READYFILE: mounts a FUSE filesystem on DIR that answers the kernel's INIT and then
 * reads nothing more, so that any access below DIR blocks for good, as on a stalled network
 * filesystem (the test then asks whether jobguard still shuts down in time). Requests are left
 * unread because the kernel lets a fatal signal end a wait for an unread request (as NFS's waits
 * are killable) but not for one the daemon has read. Creates READYFILE once mounted and runs until
 * killed; killing it aborts the connection and frees every blocked caller. Needs root and
 * /dev/fuse. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: stallfs DIR READYFILE\n");
        return 2;
    }
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "stallfs: /dev/fuse: %s\n", strerror(errno));
        return 1;
    }
    char opts[128];
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
    if (mount("stallfs", argv[1], "fuse.stallfs", MS_NOSUID | MS_NODEV, opts) != 0) {
        fprintf(stderr, "stallfs: mount %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    int r = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (r >= 0) close(r);
    static char buf[FUSE_MIN_READ_BUFFER + (1 << 20)];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == ENOENT)) continue;
        if (n < 0) return errno == ENODEV ? 0 : 1; /* ENODEV: unmounted */
        const struct fuse_in_header *in = (const void *)buf;
        if (in->opcode != FUSE_INIT) continue;
        const struct fuse_init_in *ii = (const void *)(in + 1);
        struct {
            struct fuse_out_header h;
            struct fuse_init_out o;
        } out;
        memset(&out, 0, sizeof out);
        out.h.len = sizeof out;
        out.h.unique = in->unique;
        out.o.major = FUSE_KERNEL_VERSION;
        out.o.minor = FUSE_KERNEL_MINOR_VERSION;
        out.o.max_readahead = ii->max_readahead;
        out.o.max_write = 4096;
        if (write(fd, &out, sizeof out) != (ssize_t)sizeof out) return 1;
        break;
    }
    for (;;) /* every later request stays queued, unread */
        pause();
}
