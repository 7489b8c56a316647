package io.srdma.channel.record;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The short rate check of the AEAD selection: AES-256-GCM seal and open, as the record layer calls
 * them on soft and ibv (a JCE one: init with a fresh nonce, 60 bytes of associated data, doFinal
 * array to array, and the copy of the record into the direct, registered slot after sealing and out
 * of it before opening; openssl and gcrypt the same through their library, direct buffer to direct
 * buffer, with no copy of the caller's), of 64 B, 4, 16 and 64 KiB records on the calling thread,
 * so that the rates compare what each costs the data path. The candidates are measured interleaved,
 * in rounds of {@value #SLICE_MICROS} µs per provider, size and direction, and each keeps its best
 * round (the least disturbed by other work on the machine). The rounds go on until every
 * candidate's overall score (every size) has risen by less than {@value #SETTLED_PERCENT} % for two
 * rounds in a row (at least {@value #MIN_ROUNDS} rounds), at most {@value #BUDGET_MILLIS} ms with
 * the warm-up: the JDK's GCM runs at a few percent of its speed until C2 has compiled it, which
 * takes hundreds of ms of a cold JVM (more on a loaded machine), and a check that ended before
 * would compare a cold JDK with a native library; so each candidate first seals and opens up to
 * {@value #WARM_RECORDS} small records (at most {@value #WARM_MILLIS} ms). A check that hit the
 * budget says so ({@link Result#settled}); its rates are lower bounds, the JDK's the more so. A JDK
 * with a bulk rate still below {@value #COLD_SHARE} of the best other candidate's same rate (that
 * path of its GCM not yet compiled: the rounds can settle on that) is warmed and measured alone for
 * at most {@value #COLD_EXTRA_MILLIS} ms more, and {@link Result#jdkCold} says if it never caught
 * up. Likewise a native library whose per-record calls are downcalls, at a size they serve below
 * {@value #DOWNCALL_SHARE} of the same library through jnr-ffi (measured then as the reference), is
 * warmed and measured until it catches up, within the same allowance, and {@link
 * Result#coldDowncalls} names it if it never did. Uses a throwaway key.
 *
 * <p>Stateless; thread-safe.
 */
public final class AeadRateCheck {
  /** Record sizes measured. */
  static final int[] SIZES = {64, 4096, 16 * 1024, 64 * 1024};

  /**
   * Sizes from this one up are the bulk sizes ({@link AeadRates#bulkScore}, the cold-JDK check).
   */
  static final int BULK_FROM = 4096;

  static final int MIN_ROUNDS = 4;
  static final int SLICE_MICROS = 1000;
  static final int SETTLED_PERCENT = 3;
  static final int BUDGET_MILLIS = 1000;
  private static final int AAD = 60;

  /**
   * Small records each candidate seals and opens before the rounds, for at most {@value
   * #WARM_MILLIS} ms: the JIT compiles a method by how often it is called, so small records get a
   * provider's Java code (and the JDK's GCM intrinsics, which only C2-compiled callers use)
   * compiled soonest; 64 KiB records alone took 1.7 s to get there on a cold Java 17, 4 KiB records
   * 0.3 s. 12,000 left the per-record calls below C2's thresholds, so C2 compiled them during or
   * after the rounds: on a Zen 3 with Temurin 25 two start-ups of six measured libgcrypt's 64 B
   * downcalls at 2.5x their compiled time and handed 64 B records to the JDK; with 40,000, none of
   * eight did (session 38).
   */
  static final int WARM_RECORDS = 40_000;

  static final int WARM_MILLIS = 400;

  /**
   * A JDK bulk rate below this share of the best other candidate's same rate is taken as the JDK's
   * GCM still running uncompiled: compiled (its intrinsics in use) it ran at 0.72–0.74x of the
   * native libraries on every CPU measured, uncompiled at 0.07–0.10x — and on a busy 2-core
   * start-up the compiler reached it after the rounds had settled in two start-ups of three.
   */
  static final double COLD_SHARE = 0.25;

  /**
   * How much longer the check keeps warming and measuring a JDK, or downcalls, that look uncompiled
   * (one allowance for both).
   */
  static final int COLD_EXTRA_MILLIS = 2000;

  /**
   * Downcalls sealing or opening records they serve (under {@link ForeignBinder#CRITICAL_MAX}) at
   * below this share of the same library's rate through jnr-ffi are taken as not compiled yet:
   * compiled, they ran 6–14 % faster than jnr-ffi; before C2 had compiled their callers, 2–7x
   * slower (C1's code calls a method handle through its lambda forms), and on a busy 2-core
   * start-up C2 reached them after the check in two start-ups of four (session 37).
   */
  static final double DOWNCALL_SHARE = 0.8;

  private AeadRateCheck() {}

  /**
   * What a check found.
   *
   * @param rates each provider's rates, in the order given
   * @param rounds rounds run
   * @param millis how long the check took
   * @param settled whether every score settled before the budget ran out
   * @param jdkCold whether a JDK bulk rate stayed below {@link #COLD_SHARE} of the best other
   *     candidate's through the extra {@link #COLD_EXTRA_MILLIS} (its rates are then lower bounds)
   * @param coldDowncalls the candidates whose downcalls stayed below {@link #DOWNCALL_SHARE} of
   *     their library's jnr-ffi rate through the extra time (their small-record rates are then
   *     lower bounds), comma separated, or null
   */
  record Result(
      List<AeadRates> rates,
      int rounds,
      long millis,
      boolean settled,
      boolean jdkCold,
      String coldDowncalls) {
    Result(List<AeadRates> rates, int rounds, long millis, boolean settled) {
      this(rates, rounds, millis, settled, false, null);
    }

    Result(List<AeadRates> rates, int rounds, long millis, boolean settled, boolean jdkCold) {
      this(rates, rounds, millis, settled, jdkCold, null);
    }

    /** E.g. {@code rate check settled after 9 rounds, 140 ms}. */
    String describe() {
      String s =
          settled
              ? "rate check settled after " + rounds + " rounds, " + millis + " ms"
              : "rate check NOT settled within "
                  + millis
                  + " ms ("
                  + rounds
                  + " rounds): the JIT was"
                  + " still warming; rates are lower bounds";
      if (jdkCold) {
        s +=
            "; the JDK's GCM still ran at under "
                + Math.round(COLD_SHARE * 100)
                + " % of another candidate's somewhere (not yet compiled?): its rates are lower"
                + " bounds";
      }
      if (coldDowncalls != null) {
        s +=
            "; "
                + coldDowncalls
                + ": the downcalls still ran at under "
                + Math.round(DOWNCALL_SHARE * 100)
                + " % of the same library through jnr-ffi (not yet compiled?): their rates under "
                + ForeignBinder.CRITICAL_MAX / 1024
                + " KiB are lower bounds";
      }
      return s;
    }
  }

  /** Measures each provider; the result is in the order given. */
  static Result measure(List<AeadProvider> providers) {
    int n = providers.size();
    Probe[] probes = new Probe[n];
    for (int i = 0; i < n; i++) {
      probes[i] = new Probe(providers.get(i));
    }
    long start = System.nanoTime();
    long warmEnd = start + WARM_MILLIS * 1_000_000L;
    for (int i = 0; i < WARM_RECORDS && System.nanoTime() < warmEnd; i += 100) {
      for (Probe p : probes) {
        p.warm(100);
      }
    }
    double[][][] best = new double[n][SIZES.length][2];
    double[] score = new double[n];
    int[] stable = new int[n];
    long budget = BUDGET_MILLIS * 1_000_000L;
    int rounds = 0;
    boolean settled = false;
    while (rounds < MIN_ROUNDS || (!settled && System.nanoTime() - start < budget)) {
      for (int s = 0; s < SIZES.length; s++) {
        for (int p = 0; p < n; p++) {
          best[p][s][0] = Math.max(best[p][s][0], probes[p].rate(SIZES[s], true));
          best[p][s][1] = Math.max(best[p][s][1], probes[p].rate(SIZES[s], false));
        }
      }
      rounds++;
      settled = rounds >= MIN_ROUNDS;
      for (int p = 0; p < n; p++) {
        double now = rates(providers.get(p), best[p]).overallScore();
        stable[p] = now < score[p] * (1 + SETTLED_PERCENT / 100.0) ? stable[p] + 1 : 0;
        score[p] = Math.max(score[p], now);
        settled &= stable[p] >= 2;
      }
    }
    // downcalls first: the JDK is judged against the other candidates' rates, which must be
    // their compiled ones by then
    String coldDowncalls = warmColdDowncalls(providers, probes, best, start);
    boolean jdkCold = warmColdJdk(providers, probes, best, start);
    for (Probe p : probes) {
      p.close();
    }
    List<AeadRates> out = new ArrayList<>();
    for (int p = 0; p < n; p++) {
      out.add(rates(providers.get(p), best[p]));
    }
    return new Result(
        out, rounds, (System.nanoTime() - start) / 1_000_000, settled, jdkCold, coldDowncalls);
  }

  /**
   * While a candidate whose per-record calls are downcalls ({@link AeadProvider#jnrReference})
   * seals or opens a size they serve at under {@link #DOWNCALL_SHARE} of the same library through
   * jnr-ffi, keeps warming and measuring it, until {@link #COLD_EXTRA_MILLIS} past the budget
   * (before the JDK's turn, which weighs the JDK against these rates): rounds that settled before
   * the compiler reached the downcalls would make {@code auto} weigh them at a fraction of their
   * speed, and a cold JDK against them unseen. Returns the names of those that never caught up, or
   * null.
   */
  private static String warmColdDowncalls(
      List<AeadProvider> providers, Probe[] probes, double[][][] best, long start) {
    long end = start + (BUDGET_MILLIS + COLD_EXTRA_MILLIS) * 1_000_000L;
    StringJoiner cold = new StringJoiner(", ");
    for (int p = 0; p < providers.size(); p++) {
      AeadProvider reference = providers.get(p).jnrReference();
      if (reference == null) {
        continue;
      }
      Probe jnr = new Probe(reference);
      try {
        jnr.warm(1000);
        double[][] ref = new double[SIZES.length][2];
        measureDowncallSizes(jnr, ref);
        measureDowncallSizes(jnr, ref);
        while (behind(best[p], ref)) {
          if (System.nanoTime() - end >= 0) {
            cold.add(providers.get(p).name());
            break;
          }
          probes[p].warm(200);
          measureDowncallSizes(probes[p], best[p]);
        }
      } finally {
        jnr.close();
      }
    }
    return cold.length() == 0 ? null : cold.toString();
  }

  /** Measures {@code probe} at the sizes downcalls serve, keeping the best in {@code best}. */
  private static void measureDowncallSizes(Probe probe, double[][] best) {
    for (int s = 0; s < SIZES.length && SIZES[s] < ForeignBinder.CRITICAL_MAX; s++) {
      best[s][0] = Math.max(best[s][0], probe.rate(SIZES[s], true));
      best[s][1] = Math.max(best[s][1], probe.rate(SIZES[s], false));
    }
  }

  /** Whether a rate at a size downcalls serve is under {@link #DOWNCALL_SHARE} of jnr-ffi's. */
  private static boolean behind(double[][] downcalls, double[][] jnr) {
    for (int s = 0; s < SIZES.length && SIZES[s] < ForeignBinder.CRITICAL_MAX; s++) {
      for (int d = 0; d < 2; d++) {
        if (downcalls[s][d] < DOWNCALL_SHARE * jnr[s][d]) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * While any of the JDK's bulk rates (4 KiB and up, seal and open) is below {@link #COLD_SHARE} of
   * the best other candidate's same rate, keeps warming and measuring the JDK alone, at most {@link
   * #COLD_EXTRA_MILLIS} past the budget: rounds that settled before the compiler reached the JDK's
   * GCM (or one of its paths) would make {@code auto} choose against a JDK running at a tenth of
   * its speed. True if it never caught up.
   */
  private static boolean warmColdJdk(
      List<AeadProvider> providers, Probe[] probes, double[][][] best, long start) {
    int jdk = -1;
    for (int p = 0; p < providers.size(); p++) {
      if (AeadProvider.JDK.equals(providers.get(p).name())) {
        jdk = p;
      }
    }
    if (jdk < 0 || providers.size() < 2) {
      return false;
    }
    long end = start + (BUDGET_MILLIS + COLD_EXTRA_MILLIS) * 1_000_000L;
    while (coldSomewhere(jdk, best)) {
      if (System.nanoTime() - end >= 0) {
        return true;
      }
      probes[jdk].warm(200);
      for (int s = 0; s < SIZES.length; s++) {
        best[jdk][s][0] = Math.max(best[jdk][s][0], probes[jdk].rate(SIZES[s], true));
        best[jdk][s][1] = Math.max(best[jdk][s][1], probes[jdk].rate(SIZES[s], false));
      }
    }
    return false;
  }

  /**
   * Whether one of candidate {@code jdk}'s bulk rates is under {@link #COLD_SHARE} of another's.
   */
  private static boolean coldSomewhere(int jdk, double[][][] best) {
    for (int s = 0; s < SIZES.length; s++) {
      if (SIZES[s] < BULK_FROM) {
        continue;
      }
      for (int d = 0; d < 2; d++) {
        double other = 0;
        for (int p = 0; p < best.length; p++) {
          if (p != jdk) {
            other = Math.max(other, best[p][s][d]);
          }
        }
        if (best[jdk][s][d] < COLD_SHARE * other) {
          return true;
        }
      }
    }
    return false;
  }

  private static AeadRates rates(AeadProvider provider, double[][] best) {
    List<AeadRates.Rate> rates = new ArrayList<>();
    for (int s = 0; s < SIZES.length; s++) {
      rates.add(new AeadRates.Rate(SIZES[s], best[s][0], best[s][1]));
    }
    return new AeadRates(provider.name(), rates);
  }

  /**
   * One provider's cipher, key and buffers: arrays for a JCE provider, direct buffers for a
   * native-memory one (each on the memory its data path uses).
   */
  private static final class Probe {
    private final Cipher cipher;
    private final NativeGcm gcm;
    private final SecretKeySpec key;
    private final byte[] nonce = new byte[12];
    private final byte[] aad = new byte[AAD];
    private final byte[] plain = new byte[SIZES[SIZES.length - 1]];
    private final byte[] sealed = new byte[plain.length + 16];
    private final ByteBuffer plainNative;
    private final ByteBuffer sealedNative;
    private long sequence;

    Probe(AeadProvider provider) {
      this.cipher = provider.nativeMemory() ? null : provider.newCipher();
      this.gcm = provider.nativeMemory() ? provider.newNativeGcm(plain.length) : null;
      this.plainNative = gcm == null ? null : ByteBuffer.allocateDirect(plain.length);
      this.sealedNative = ByteBuffer.allocateDirect(sealed.length);
      byte[] k = new byte[32];
      SecureRandom random = new SecureRandom();
      random.nextBytes(k);
      random.nextBytes(nonce);
      random.nextBytes(plain);
      this.key = new SecretKeySpec(k, "AES");
      java.util.Arrays.fill(k, (byte) 0);
      if (plainNative != null) {
        plainNative.put(0, plain);
      }
    }

    void close() {
      if (gcm != null) {
        gcm.close();
      }
    }

    /** Seals and opens {@code records} small records (see {@link #WARM_RECORDS}). */
    void warm(int records) {
      try {
        for (int i = 0; i < records; i++) {
          int size = i % 8 == 0 ? 4096 : 64;
          seal(size);
          open(size);
        }
      } catch (GeneralSecurityException e) {
        throw new AeadException("the rate check failed: " + e, e);
      }
    }

    /** MB/s of sealing (or opening) {@code size}-byte records for one slice. */
    double rate(int size, boolean seal) {
      try {
        if (!seal) {
          seal(size); // a valid record to open, under the nonce now in place
        }
        long start = System.nanoTime();
        long end = start + SLICE_MICROS * 1000L;
        long records = 0;
        long now;
        do {
          for (int i = 0; i < 4; i++) {
            if (seal) {
              seal(size);
            } else {
              open(size);
            }
          }
          records += 4;
          now = System.nanoTime();
        } while (now < end);
        return (double) records * size / ((now - start) / 1e3);
      } catch (GeneralSecurityException e) {
        throw new AeadException("the rate check failed: " + e, e);
      }
    }

    private void seal(int size) throws GeneralSecurityException {
      sequence++;
      for (int i = 0; i < 8; i++) {
        nonce[4 + i] = (byte) (sequence >>> (56 - 8 * i));
      }
      if (gcm != null) {
        gcm.seal(key, nonce, aad, AAD, plainNative, 0, size, sealedNative, 0);
        return;
      }
      cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonce));
      cipher.updateAAD(aad, 0, AAD);
      cipher.doFinal(plain, 0, size, sealed, 0);
      sealedNative.put(0, sealed, 0, size + 16); // into the registered slot, as RecordSealer does
    }

    private void open(int size) throws GeneralSecurityException {
      if (gcm != null) {
        if (!gcm.open(key, nonce, aad, AAD, sealedNative, 0, size, plainNative, 0)) {
          throw new AEADBadTagException("the rate check's own record did not open");
        }
        return;
      }
      sealedNative.get(0, sealed, 0, size + 16); // out of the region, as RecordOpener does
      cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, nonce));
      cipher.updateAAD(aad, 0, AAD);
      cipher.doFinal(sealed, 0, size + 16, plain, 0);
    }
  }
}
