/* The floor the io_uring backend is measured against: the least an echo
 * server on io_uring can do on this machine. One thread, one ring, no
 * futures and no runtime: a multishot accept, a multishot receive per
 * connection into a ring of provided buffers, and each received buffer
 * sent back as it is and returned to the ring when the send completes.
 * One io_uring_enter per batch of completions submits and waits.
 *
 *   uring_echo_floor PORT [ignored...]
 *
 * Arguments as the peers' echo servers take them, so that
 * ../shared/peers/echo_bench.sh runs it the same way. Not a server to copy:
 * it trusts its clients (no limits, no timeouts); bench only. */
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

enum { kBuffers = 4096, kBufferSize = 2048, kGroup = 0 };
enum { kAccept = 1, kRecv = 2, kSend = 3, kTerm = 4 };

/* user_data: the operation in the low byte, the fd above, the buffer id
 * of a send in bits 32..47. */
static uint64_t token(int op, int fd, unsigned id) { return (uint64_t)op | ((uint64_t)fd << 8) | ((uint64_t)id << 32); }

static struct io_uring ring;
/* SIGTERM ends the loop and returns from main, so that a profiler the
 * server runs under (callgrind, for scripts/bench) writes its output. It
 * is read from a signalfd on the ring: the loop stays one io_uring_enter
 * per batch, and a handler would not run under valgrind, which keeps
 * signals blocked while a thread waits in io_uring_enter. */
static struct signalfd_siginfo term_info;
static struct io_uring_buf_ring* buffers;
static unsigned char* memory;

static struct io_uring_sqe* sqe(void) {
  struct io_uring_sqe* s = io_uring_get_sqe(&ring);
  if (s == NULL) {
    io_uring_submit(&ring);
    s = io_uring_get_sqe(&ring);
  }
  return s;
}

static void recycle(unsigned id) {
  io_uring_buf_ring_add(buffers, memory + (size_t)id * kBufferSize, kBufferSize, (unsigned short)id,
                        io_uring_buf_ring_mask(kBuffers), 0);
  io_uring_buf_ring_advance(buffers, 1);
}

static void arm_recv(int fd) {
  struct io_uring_sqe* s = sqe();
  io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
  s->flags |= IOSQE_BUFFER_SELECT;
  s->buf_group = kGroup;
  io_uring_sqe_set_data64(s, token(kRecv, fd, 0));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: uring_echo_floor PORT\n");
    return 2;
  }
  int port = atoi(argv[1]);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, NULL);
  int term_fd = signalfd(-1, &term, SFD_CLOEXEC);
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  int r = io_uring_queue_init_params(4096, &ring, &params);
  if (r < 0) {
    fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-r));
    return 1;
  }
  buffers = mmap(NULL, kBuffers * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  memory = malloc((size_t)kBuffers * kBufferSize);
  io_uring_buf_ring_init(buffers);
  struct io_uring_buf_reg reg = {.ring_addr = (uint64_t)(uintptr_t)buffers, .ring_entries = kBuffers, .bgid = kGroup};
  if ((r = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
    fprintf(stderr, "io_uring_register_buf_ring: %s\n", strerror(-r));
    return 1;
  }
  for (unsigned id = 0; id < kBuffers; ++id) recycle(id);

  int listener = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) < 0 || listen(listener, 1024) < 0) {
    perror("bind/listen");
    return 1;
  }
  struct io_uring_sqe* s = sqe();
  io_uring_prep_multishot_accept(s, listener, NULL, NULL, 0);
  io_uring_sqe_set_data64(s, token(kAccept, listener, 0));

  s = sqe();
  io_uring_prep_read(s, term_fd, &term_info, sizeof term_info, 0);
  io_uring_sqe_set_data64(s, token(kTerm, term_fd, 0));

  int stopping = 0;
  while (!stopping) {
    io_uring_submit_and_wait(&ring, 1);
    struct io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      uint64_t data = cqe->user_data;
      int op = (int)(data & 0xff);
      int fd = (int)((data >> 8) & 0xffffff);
      if (op == kAccept) {
        if (cqe->res >= 0) {
          setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          arm_recv(cqe->res);
        }
        if (!(cqe->flags & IORING_CQE_F_MORE)) {
          s = sqe();
          io_uring_prep_multishot_accept(s, listener, NULL, NULL, 0);
          io_uring_sqe_set_data64(s, token(kAccept, listener, 0));
        }
      } else if (op == kRecv) {
        if (cqe->res > 0) {
          unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
          s = sqe();
          io_uring_prep_send(s, fd, memory + (size_t)id * kBufferSize, (size_t)cqe->res, MSG_NOSIGNAL);
          io_uring_sqe_set_data64(s, token(kSend, fd, id));
          if (!(cqe->flags & IORING_CQE_F_MORE)) arm_recv(fd);
        } else if (cqe->res == -ENOBUFS) {
          arm_recv(fd);
        } else {
          if (cqe->flags & IORING_CQE_F_BUFFER) recycle(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
          if (!(cqe->flags & IORING_CQE_F_MORE)) close(fd);
        }
      } else if (op == kTerm) {
        stopping = 1;
      } else if (op == kSend) {
        recycle((unsigned)(data >> 32));  /* a short send is not resent: 64-byte messages never are */
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
  return 0;
}
