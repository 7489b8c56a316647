// libgcrypt's own cost of one 64 B AES-256-GCM seal and open (the calls NativeGcm makes, no JVM):
// the floor under RecordSealer/RecordOpener's 64 B records (docs/performance.md, session 31).
// gcc -O2 bench/native/gcrypt-gcm64.c -o /tmp/gcm64 /usr/lib/x86_64-linux-gnu/libgcrypt.so.20 && /tmp/gcm64
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
typedef void* gcry_cipher_hd_t;
extern const char* gcry_check_version(const char*);
extern int gcry_cipher_open(gcry_cipher_hd_t*, int, int, unsigned);
extern int gcry_cipher_setkey(gcry_cipher_hd_t, const void*, size_t);
extern int gcry_cipher_setiv(gcry_cipher_hd_t, const void*, size_t);
extern int gcry_cipher_authenticate(gcry_cipher_hd_t, const void*, size_t);
extern int gcry_cipher_encrypt(gcry_cipher_hd_t, void*, size_t, const void*, size_t);
extern int gcry_cipher_decrypt(gcry_cipher_hd_t, void*, size_t, const void*, size_t);
extern int gcry_cipher_gettag(gcry_cipher_hd_t, void*, size_t);
extern int gcry_cipher_checktag(gcry_cipher_hd_t, const void*, size_t);
extern int gcry_control(int, ...);
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(){
  gcry_check_version(NULL);
  gcry_control(37 /*GCRYCTL_INITIALIZATION_FINISHED*/,0);
  gcry_cipher_hd_t h; unsigned char key[32]={1},iv[12]={0},aad[40]={2},in[64]={3},out[64],tag[16];
  gcry_cipher_open(&h,9 /*AES256*/,9 /*GCM*/,0); gcry_cipher_setkey(h,key,32);
  for(int sz=64; sz<=64; sz*=2){
  long N=5000000; double t0=now();
  for(long i=0;i<N;i++){ memcpy(iv,&i,8); gcry_cipher_setiv(h,iv,12); gcry_cipher_authenticate(h,aad,40); gcry_cipher_encrypt(h,out,sz,in,sz); gcry_cipher_gettag(h,tag,16);}
  double t1=now(); printf("seal %d B: %.1f ns\n",sz,(t1-t0)/N*1e9);
  t0=now();
  for(long i=0;i<N;i++){ memcpy(iv,&i,8); gcry_cipher_setiv(h,iv,12); gcry_cipher_authenticate(h,aad,40); gcry_cipher_decrypt(h,out,sz,in,sz); gcry_cipher_checktag(h,tag,16);}
  t1=now(); printf("open(fail tag) %d B: %.1f ns\n",sz,(t1-t0)/N*1e9);
  }
}
