// AES-256-GCM on one core, no JVM: libgcrypt (the `gcrypt` provider) against intel-ipsec-mb's
// stitched VAES/VPCLMULQDQ variant and its AES-NI one (the `ipsec-mb` provider's two variants),
// the calls the record layer makes, 64 B to 1 MiB; first checks that all three seal the same
// bytes and tag and open each other's records (docs/performance.md, session 41).
// gcc -O2 bench/native/gcm-libraries.c -o /tmp/gcm-libs /usr/lib/x86_64-linux-gnu/libgcrypt.so.20 \
//   /usr/lib/x86_64-linux-gnu/libIPSec_MB.so.2 && /tmp/gcm-libs
// Needs a CPU with AVX2, VAES and VPCLMULQDQ (the vaes_avx2 variant is called unconditionally).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef void *gcry_cipher_hd_t;
extern const char *gcry_check_version(const char *);
extern int gcry_cipher_open(gcry_cipher_hd_t *, int, int, unsigned);
extern int gcry_cipher_setkey(gcry_cipher_hd_t, const void *, size_t);
extern int gcry_cipher_setiv(gcry_cipher_hd_t, const void *, size_t);
extern int gcry_cipher_authenticate(gcry_cipher_hd_t, const void *, size_t);
extern int gcry_cipher_encrypt(gcry_cipher_hd_t, void *, size_t, const void *, size_t);
extern int gcry_cipher_gettag(gcry_cipher_hd_t, void *, size_t);
extern const char *imb_get_version_str(void);
typedef void (*pre_fn)(const void *, void *);
typedef void (*gcm_fn)(const void *, void *, uint8_t *, const uint8_t *, uint64_t, const uint8_t *,
                       const uint8_t *, uint64_t, uint8_t *, uint64_t);
extern void aes_gcm_pre_256_vaes_avx2(const void *, void *);
extern void aes_gcm_enc_256_vaes_avx2(const void *, void *, uint8_t *, const uint8_t *, uint64_t,
                                      const uint8_t *, const uint8_t *, uint64_t, uint8_t *, uint64_t);
extern void aes_gcm_dec_256_vaes_avx2(const void *, void *, uint8_t *, const uint8_t *, uint64_t,
                                      const uint8_t *, const uint8_t *, uint64_t, uint8_t *, uint64_t);
extern void aes_gcm_pre_256_avx_gen4(const void *, void *);
extern void aes_gcm_enc_256_avx_gen4(const void *, void *, uint8_t *, const uint8_t *, uint64_t,
                                     const uint8_t *, const uint8_t *, uint64_t, uint8_t *, uint64_t);
extern void aes_gcm_dec_256_avx_gen4(const void *, void *, uint8_t *, const uint8_t *, uint64_t,
                                     const uint8_t *, const uint8_t *, uint64_t, uint8_t *, uint64_t);
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static uint8_t key[32], iv[12], aad[40];
static gcry_cipher_hd_t h;
static void gcrypt_seal(uint8_t *out, const uint8_t *in, size_t n, uint8_t *tag) {
  gcry_cipher_setiv(h, iv, 12);
  gcry_cipher_authenticate(h, aad, sizeof aad);
  gcry_cipher_encrypt(h, out, n, in, n);
  gcry_cipher_gettag(h, tag, 16);
}
int main(void) {
  static uint8_t kd[2][2048] __attribute__((aligned(64)));
  static uint8_t ctx[256] __attribute__((aligned(64)));
  const char *names[] = {"vaes_avx2", "avx_gen4"};
  pre_fn pre[] = {aes_gcm_pre_256_vaes_avx2, aes_gcm_pre_256_avx_gen4};
  gcm_fn enc[] = {aes_gcm_enc_256_vaes_avx2, aes_gcm_enc_256_avx_gen4};
  gcm_fn dec[] = {aes_gcm_dec_256_vaes_avx2, aes_gcm_dec_256_avx_gen4};
  for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 7 + 1);
  printf("libgcrypt %s, intel-ipsec-mb %s\n", gcry_check_version(0), imb_get_version_str());
  gcry_cipher_open(&h, 9, 9, 0); // AES256, GCM
  gcry_cipher_setkey(h, key, 32);
  for (int v = 0; v < 2; v++) pre[v](key, kd[v]);
  size_t n = 100003;
  uint8_t *in = malloc(n), *a = malloc(n), *b = malloc(n), *p = malloc(n), ta[16], tb[16], tc[16];
  for (size_t i = 0; i < n; i++) in[i] = (uint8_t)(i * 13);
  gcrypt_seal(a, in, n, ta);
  for (int v = 0; v < 2; v++) {
    enc[v](kd[v], ctx, b, in, n, iv, aad, sizeof aad, tb, 16);
    dec[v](kd[v], ctx, p, a, n, iv, aad, sizeof aad, tc, 16);
    int same = !memcmp(a, b, n) && !memcmp(ta, tb, 16) && !memcmp(p, in, n) && !memcmp(ta, tc, 16);
    printf("%s against libgcrypt: %s\n", names[v], same ? "same bytes and tag" : "DIFFERENT");
    if (!same) return 1;
  }
  size_t sizes[] = {64, 4096, 65536, 1048576};
  for (int s = 0; s < 4; s++) {
    size_t len = sizes[s];
    uint8_t *x = aligned_alloc(64, len + 64), *y = aligned_alloc(64, len + 64), tag[16];
    memset(x, 5, len);
    long it = (long)(1.5e9 / (len + 200));
    if (it > 3000000) it = 3000000;
    double t0 = now();
    for (long i = 0; i < it; i++) { iv[0] = (uint8_t)i; gcrypt_seal(y, x, len, tag); }
    double g = now() - t0;
    printf("%8zu B  gcrypt seal %6.0f MB/s (%.3f us)", len, len * it / g / 1e6, g / it * 1e6);
    for (int v = 0; v < 2; v++) {
      t0 = now();
      for (long i = 0; i < it; i++) { iv[0] = (uint8_t)i; enc[v](kd[v], ctx, y, x, len, iv, aad, sizeof aad, tag, 16); }
      double e = now() - t0;
      t0 = now();
      for (long i = 0; i < it; i++) { iv[0] = (uint8_t)i; dec[v](kd[v], ctx, x, y, len, iv, aad, sizeof aad, tag, 16); }
      double d = now() - t0;
      printf("  %s seal %6.0f open %6.0f MB/s (%.3f us)", names[v], len * it / e / 1e6,
             len * it / d / 1e6, e / it * 1e6);
    }
    printf("\n");
    free(x);
    free(y);
  }
  return 0;
}
