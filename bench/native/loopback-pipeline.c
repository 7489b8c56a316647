// The loopback provider's 64 KiB sealed pipeline with nothing else in it: no JVM, no channel, no
// completions — a writer thread seals each record (intel-ipsec-mb vaes_avx2, the `ipsec-mb`
// provider's calls) into a staging ring of 64 slots, the "RNIC" copies it into a 16-slot region
// ring (the bench's window), and an opener thread copies it out of the region (the snapshot) and
// opens it; the two threads hand records over through atomic counters, spinning. It measures what
// two cores of this machine allow at most against the bench's AEAD bound (one core sealing, and
// one opening with its snapshot copy, nothing else running), for four placements of the RNIC's
// copy: on the writer (the loopback provider's), on the opener (the target's poller), taken by
// whichever thread is idle first, or by a third thread of the RNIC's own (engine: on a machine with
// a core for it, what hardware's DMA engine does); and (-DCHUNK) the opener's snapshot folded into
// its open (docs/performance.md, session 42).
// gcc -O2 bench/native/loopback-pipeline.c -o /tmp/lp /usr/lib/x86_64-linux-gnu/libIPSec_MB.so.2 \
//   -lpthread && for i in 1 2 3; do for m in writer shared opener engine; do /tmp/lp $m; done; done
// Needs a CPU with AVX2, VAES and VPCLMULQDQ (the vaes_avx2 variant is called unconditionally).
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
extern void aes_gcm_pre_256_vaes_avx2(const void *, void *);
extern void aes_gcm_init_256_vaes_avx2(const void *, void *, const uint8_t *, const uint8_t *,
                                       uint64_t);
extern void aes_gcm_enc_256_update_vaes_avx2(const void *, void *, uint8_t *, const uint8_t *,
                                             uint64_t);
extern void aes_gcm_dec_256_update_vaes_avx2(const void *, void *, uint8_t *, const uint8_t *,
                                             uint64_t);
extern void aes_gcm_enc_256_finalize_vaes_avx2(const void *, void *, uint8_t *, uint64_t);
extern void aes_gcm_dec_256_finalize_vaes_avx2(const void *, void *, uint8_t *, uint64_t);

#define N 65536       // record payload
#define SLOT (N + 64) // ciphertext, tag, padding
#define STAGING 64    // the SDK's staging slots
#define REGION 16     // the bench's window at 64 KiB
#define RECORDS 60000
enum { WRITER, OPENER, SHARED, ENGINE };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static uint8_t kd[2048] __attribute__((aligned(64)));
static uint8_t iv[12], aad[40];
static uint8_t *staging, *region, *plain;
static int mode;
static _Atomic long sealed, claimed, copied, opened, copies[4]; // by who: WRITER .. ENGINE
static _Atomic char placed[RECORDS];

static void seal(uint8_t *out, const uint8_t *in) {
  uint8_t ctx[256] __attribute__((aligned(64)));
  aes_gcm_init_256_vaes_avx2(kd, ctx, iv, aad, sizeof aad);
  aes_gcm_enc_256_update_vaes_avx2(kd, ctx, out, in, N);
  aes_gcm_enc_256_finalize_vaes_avx2(kd, ctx, out + N, 16);
}
// the snapshot then the open, as NativeGcm.open does; returns whether the tag was right. Built with
// -DCHUNK=n the snapshot is taken n bytes at a time, each piece opened while it is in L1 (the
// snapshot folded into the open)
#ifndef CHUNK
#define CHUNK 0
#endif
static int open_record(uint8_t *scratch, uint8_t *out, const uint8_t *record) {
  uint8_t ctx[256] __attribute__((aligned(64))), tag[16];
  aes_gcm_init_256_vaes_avx2(kd, ctx, iv, aad, sizeof aad);
  if (CHUNK == 0) {
    memcpy(scratch, record, N + 16);
    aes_gcm_dec_256_update_vaes_avx2(kd, ctx, out, scratch, N);
  } else {
    for (int at = 0; at < N; at += CHUNK) {
      memcpy(scratch, record + at, CHUNK);
      aes_gcm_dec_256_update_vaes_avx2(kd, ctx, out + at, scratch, CHUNK);
    }
    memcpy(scratch + N, record + N, 16);
  }
  aes_gcm_dec_256_finalize_vaes_avx2(kd, ctx, tag, 16);
  return !memcmp(tag, scratch + N, 16);
}
// the RNIC's copy of the next sealed record, if there is one nobody took; placed in order
static int rnic_copy(int who) {
  long c = atomic_load(&claimed);
  if (c >= atomic_load(&sealed) || !atomic_compare_exchange_strong(&claimed, &c, c + 1)) return 0;
  memcpy(region + (c % REGION) * SLOT, staging + (c % STAGING) * SLOT, N + 16);
  atomic_store(&placed[c], 1);
  long d = atomic_load(&copied);
  while (d < RECORDS && atomic_load(&placed[d])) // on a lost race d is reloaded
    if (atomic_compare_exchange_weak(&copied, &d, d + 1)) d++;
  copies[who]++;
  return 1;
}
// waiting for the other threads: spinning, or with three threads on the CPUs yielding them
static void idle(void) {
  if (mode == ENGINE) sched_yield();
  else __builtin_ia32_pause();
}
// a thread of the RNIC's own, as hardware's DMA engine (mode engine: a third thread on the CPUs)
static void *engine(void *unused) {
  while (atomic_load(&claimed) < RECORDS)
    if (!rnic_copy(ENGINE)) idle();
  return unused;
}
static void *writer(void *unused) {
  for (long i = 0; i < RECORDS || atomic_load(&claimed) < RECORDS;) {
    if (i < RECORDS && i - atomic_load(&opened) < REGION &&
        i - atomic_load(&copied) < STAGING - REGION) {
      seal(staging + (i % STAGING) * SLOT, plain);
      atomic_store(&sealed, ++i);
      if (mode == WRITER) rnic_copy(WRITER);
    } else if (mode != SHARED || !rnic_copy(WRITER)) {
      idle();
    }
  }
  return unused;
}
int main(int argc, char **argv) {
  mode = argc < 2 ? WRITER : !strcmp(argv[1], "opener") ? OPENER
                           : !strcmp(argv[1], "shared") ? SHARED
                           : !strcmp(argv[1], "engine") ? ENGINE : WRITER;
  uint8_t key[32] = {1, 2, 3};
  aes_gcm_pre_256_vaes_avx2(key, kd);
  staging = aligned_alloc(64, STAGING * SLOT);
  region = aligned_alloc(64, REGION * SLOT);
  plain = aligned_alloc(64, SLOT);
  uint8_t *scratch = aligned_alloc(64, SLOT), *out = aligned_alloc(64, SLOT), *one = aligned_alloc(64, SLOT);
  memset(plain, 7, N);
  memset(staging, 0, STAGING * SLOT);
  memset(region, 0, REGION * SLOT);
  // the bound, as the bench takes it: each operation alone on one core, buffers hot; best of two
  double s = 1e9, o = 1e9;
  for (int rep = 0; rep < 2; rep++) {
    double t0 = now();
    for (int j = 0; j < 20000; j++) seal(one, plain);
    double t1 = now();
    for (int j = 0; j < 20000; j++) open_record(scratch, out, one);
    double t2 = now();
    s = (t1 - t0) / 20000 < s ? (t1 - t0) / 20000 : s;
    o = (t2 - t1) / 20000 < o ? (t2 - t1) / 20000 : o;
  }
  double bound = N / (s > o ? s : o) / 1e6;
  pthread_t t, e;
  int bad = 0;
  double t0 = now();
  pthread_create(&t, 0, writer, 0);
  if (mode == ENGINE) pthread_create(&e, 0, engine, 0);
  for (long i = 0; i < RECORDS;) {
    if (atomic_load(&copied) > i) {
      bad += !open_record(scratch, out, region + (i % REGION) * SLOT);
      atomic_store(&opened, ++i);
    } else if (mode == WRITER || mode == ENGINE || !rnic_copy(OPENER)) {
      idle();
    }
  }
  double wall = now() - t0, rate = N / (wall / RECORDS) / 1e6;
  pthread_join(t, 0);
  if (mode == ENGINE) pthread_join(e, 0);
  printf("bound seal %5.0f open %5.0f MB/s | RNIC copy on %-6s: %5.2f us a record, %5.0f MB/s = %.2f"
         " of the bound (copies by writer %ld, opener %ld, engine %ld)%s\n",
         N / s / 1e6, N / o / 1e6, argc < 2 ? "writer" : argv[1], wall / RECORDS * 1e6, rate,
         rate / bound, (long)copies[WRITER], (long)copies[OPENER], (long)copies[ENGINE], bad ? " WRONG TAGS" : "");
  return bad != 0;
}
