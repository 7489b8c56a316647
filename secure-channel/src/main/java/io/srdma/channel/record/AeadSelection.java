package io.srdma.channel.record;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the data path's AES-256-GCM once per process: the JDK's, ACCP's, OpenSSL libcrypto's or
 * libgcrypt's (see {@link AeadProvider}), as an {@link AeadPlan} — a provider for small records and
 * one for large ones, the same one where one is fastest at both. Every candidate must pass the
 * {@link AeadKnownAnswer known-answer test} first; then a short {@link AeadRateCheck rate check}
 * measures each on this machine as the data path pays for it (the JCE ones on arrays plus the copy
 * into and out of the registered slot, openssl and gcrypt on native memory). In {@code auto}, at
 * each of 64 B and 64 KiB the fastest native library there (score: harmonic mean of its seal and
 * open MB/s at that size) is chosen when it is at least {@value #NATIVE_MARGIN}× the JDK's score
 * there, else the JDK — a tie or a small lead stays with the JDK, which is always there and is one
 * native library less to trust. Two providers only where each leads the other by that margin at its
 * own end; otherwise the one picked at the other end takes every size (a split for a few percent
 * flipped between start-ups, and the JDK of one start-up, measured 9 % behind libgcrypt at 64 B,
 * kept 64 B records and sealed them at a third of libgcrypt's rate in the data path). The 64 B
 * winner seals and opens records under the plan's {@link AeadPlan#bulkFrom() bulk size}, the 64 KiB
 * winner the rest; the bulk size is the smallest size measured from which up the 64 KiB winner is
 * the faster of the two at every size measured (4 KiB, 16 KiB, 64 KiB: records between two sizes go
 * to the provider faster at the size below them). On a CPU where one library is fastest per small
 * record and another per large one (libgcrypt's few calls against AWS-LC's AVX-512 code, say) each
 * size gets the faster, instead of the choice flipping with the noise of a short check between two
 * providers each far ahead at one end. The choice, why, and every candidate's rates are logged once
 * at INFO.
 *
 * <p>Forced by {@link #select(Mode)} ({@code --aead}), else the system property {@value #PROPERTY},
 * else the environment variable {@value #ENV}: {@code auto} | {@code jdk} | {@code accp} | {@code
 * openssl} | {@code gcrypt}. A forced provider that is not available or fails its known-answer test
 * is an {@link AeadException} naming why, never a silent fallback; in {@code auto}, a native
 * library not loading is logged once at INFO with the reason (at WARN when it loaded but failed its
 * known-answer test) and the others are used.
 *
 * <p>Thread-safe: the choice is made under this class's lock and published once.
 */
public final class AeadSelection {
  /** The system property that forces the choice. */
  public static final String PROPERTY = "srdma.aead";

  /** The environment variable that forces the choice (the property wins). */
  public static final String ENV = "SRDMA_AEAD";

  /**
   * A native library's (ACCP's, openssl's, gcrypt's) score at a size must be at least this multiple
   * of the JDK's for it to be chosen for that size in auto.
   */
  public static final double NATIVE_MARGIN = 1.10;

  private static final Logger LOG = LoggerFactory.getLogger(AeadSelection.class);
  private static volatile Choice process;

  /** What is asked for. */
  public enum Mode {
    /** The faster of the providers that load and pass their known-answer test. */
    AUTO,
    /** The JDK's AES-GCM. */
    JDK,
    /** ACCP's, or a start-up error. */
    ACCP,
    /** OpenSSL's libcrypto on native memory, or a start-up error. */
    OPENSSL,
    /** libgcrypt on native memory, or a start-up error. */
    GCRYPT;

    /**
     * {@code auto}, {@code jdk}, {@code accp}, {@code openssl} or {@code gcrypt}, any case.
     *
     * @throws AeadException for anything else
     */
    public static Mode parse(String value, String where) {
      for (Mode m : values()) {
        if (m.label().equalsIgnoreCase(value.trim())) {
          return m;
        }
      }
      throw new AeadException(
          where + "=" + value + " is not one of auto, jdk, accp, openssl, gcrypt");
    }

    /** Lower-case name, as written in options. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * The choice.
   *
   * @param plan the provider the data path uses for each record size
   * @param mode what was asked for
   * @param reason why this plan, in words
   * @param rates the rate check's result of every candidate measured, the plan's providers first
   * @param accpUnavailable why ACCP is not a candidate, or null when it is (or was not tried)
   * @param opensslUnavailable why openssl is not a candidate, or null when it is (or was not tried)
   * @param gcryptUnavailable why gcrypt is not a candidate, or null when it is (or was not tried)
   */
  public record Choice(
      AeadPlan plan,
      Mode mode,
      String reason,
      List<AeadRates> rates,
      String accpUnavailable,
      String opensslUnavailable,
      String gcryptUnavailable) {
    /** Canonical constructor: keeps an immutable copy of the rates. */
    public Choice {
      rates = List.copyOf(rates);
    }

    /** A choice of one provider in which neither openssl nor gcrypt was tried. */
    public Choice(
        AeadProvider provider,
        Mode mode,
        String reason,
        List<AeadRates> rates,
        String accpUnavailable) {
      this(AeadPlan.single(provider), mode, reason, rates, accpUnavailable, null, null);
    }

    /** One line: the plan, why, every candidate's rates. */
    public String summary() {
      StringBuilder b = new StringBuilder().append(plan.description()).append(": ").append(reason);
      for (AeadRates r : rates) {
        b.append("; ").append(r.provider()).append(' ').append(r);
      }
      if (accpUnavailable != null) {
        b.append("; accp unavailable: ").append(accpUnavailable);
      }
      if (opensslUnavailable != null) {
        b.append("; openssl unavailable: ").append(opensslUnavailable);
      }
      if (gcryptUnavailable != null) {
        b.append("; gcrypt unavailable: ").append(gcryptUnavailable);
      }
      return b.toString();
    }
  }

  private AeadSelection() {}

  /**
   * The process's choice, made on the first call in the mode the system property or environment
   * asks for (auto when neither).
   *
   * @throws AeadException when a forced provider cannot be had, or the setting is malformed
   */
  public static Choice current() {
    Choice c = process;
    return c != null ? c : select(requestedMode());
  }

  /**
   * Makes the process's choice in {@code mode} (an explicit {@code --aead}, which wins over the
   * property and the environment); returns it when it was made already in the same mode.
   *
   * @throws AeadException when the provider cannot be had, or the choice was already made in
   *     another mode
   */
  public static synchronized Choice select(Mode mode) {
    Choice c = process;
    if (c != null) {
      if (c.mode() != mode) {
        throw new AeadException(
            "the data-path AEAD was already chosen in mode "
                + c.mode().label()
                + "; it cannot be changed to "
                + mode.label()
                + " in a running process");
      }
      return c;
    }
    c =
        choose(
            mode,
            AeadProvider::jdk,
            AeadProvider::accp,
            AeadProvider::openssl,
            AeadProvider::gcrypt);
    logUnavailable("ACCP", c.accpUnavailable());
    logUnavailable("openssl", c.opensslUnavailable());
    logUnavailable("gcrypt", c.gcryptUnavailable());
    LOG.info("data-path AEAD: {}", c.summary());
    process = c;
    return c;
  }

  private static void logUnavailable(String what, String why) {
    if (why != null && why.contains("known-answer")) {
      LOG.warn("{} not used: {}", what, why); // it loaded and computed wrong: worth a look
    } else if (why != null) {
      LOG.info("{} not used: {}", what, why);
    }
  }

  /** The mode asked for by {@value #PROPERTY}, else {@value #ENV}, else auto. */
  public static Mode requestedMode() {
    String p = System.getProperty(PROPERTY);
    if (p != null && !p.isBlank()) {
      return Mode.parse(p, "-D" + PROPERTY);
    }
    String e = System.getenv(ENV);
    if (e != null && !e.isBlank()) {
      return Mode.parse(e, ENV);
    }
    return Mode.AUTO;
  }

  /** Forgets the process's choice, so that a test can watch it being made (tests only). */
  static synchronized void forget() {
    process = null;
  }

  private static final Supplier<AeadProvider> NOT_TRIED =
      () -> {
        throw new AeadException("not tried");
      };

  /**
   * As {@link #choose(Mode, Supplier, Supplier, Supplier, Supplier)}, openssl and gcrypt not tried.
   */
  static Choice choose(Mode mode, Supplier<AeadProvider> jdk, Supplier<AeadProvider> accp) {
    return choose(mode, jdk, accp, NOT_TRIED, NOT_TRIED);
  }

  /** As {@link #choose(Mode, Supplier, Supplier, Supplier, Supplier)} with gcrypt not tried. */
  static Choice choose(
      Mode mode,
      Supplier<AeadProvider> jdk,
      Supplier<AeadProvider> accp,
      Supplier<AeadProvider> openssl) {
    return choose(mode, jdk, accp, openssl, NOT_TRIED);
  }

  /**
   * Chooses among the candidates these suppliers give (a supplier throws {@link AeadException} when
   * its provider is unavailable). Does not log.
   */
  static Choice choose(
      Mode mode,
      Supplier<AeadProvider> jdk,
      Supplier<AeadProvider> accp,
      Supplier<AeadProvider> openssl,
      Supplier<AeadProvider> gcrypt) {
    if (mode == Mode.AUTO) {
      return auto(jdk, accp, openssl, gcrypt);
    }
    AeadProvider forced =
        switch (mode) {
          case JDK -> forced(jdk, "jdk");
          case ACCP -> forced(accp, "accp");
          case OPENSSL -> forced(openssl, "openssl");
          default -> forced(gcrypt, "gcrypt");
        };
    List<AeadProvider> measured = new ArrayList<>(List.of(forced));
    if (mode != Mode.JDK) {
      try {
        AeadProvider j = jdk.get();
        AeadKnownAnswer.check(j);
        measured.add(j); // for comparison only
      } catch (AeadException e) {
        // the JDK is not needed when another provider is forced; its rates are just not shown
      }
    }
    AeadRateCheck.Result r = AeadRateCheck.measure(measured);
    return new Choice(
        AeadPlan.single(forced),
        mode,
        "forced (" + PROPERTY + "=" + mode.label() + "); " + r.describe(),
        r.rates(),
        null,
        null,
        null);
  }

  private static AeadProvider forced(Supplier<AeadProvider> supplier, String name) {
    AeadProvider p;
    try {
      p = supplier.get();
    } catch (AeadException e) {
      throw new AeadException(
          PROPERTY + "=" + name + " is forced but unavailable: " + e.getMessage(), e);
    }
    try {
      AeadKnownAnswer.check(p);
    } catch (AeadException e) {
      throw new AeadException(PROPERTY + "=" + name + " is forced but " + e.getMessage(), e);
    }
    return p;
  }

  /** The provider, or null with the reason in {@code refused[0]}. */
  private static AeadProvider candidate(Supplier<AeadProvider> supplier, String[] refused) {
    try {
      AeadProvider p = supplier.get();
      AeadKnownAnswer.check(p);
      return p;
    } catch (AeadException e) {
      refused[0] = e.getMessage();
      return null;
    }
  }

  private static Choice auto(
      Supplier<AeadProvider> jdk,
      Supplier<AeadProvider> accp,
      Supplier<AeadProvider> openssl,
      Supplier<AeadProvider> gcrypt) {
    String[] jdkRefused = new String[1];
    String[] accpRefused = new String[1];
    String[] opensslRefused = new String[1];
    String[] gcryptRefused = new String[1];
    AeadProvider j = candidate(jdk, jdkRefused);
    List<AeadProvider> natives = new ArrayList<>();
    AeadProvider a = candidate(accp, accpRefused);
    if (a != null) {
      natives.add(a);
    }
    AeadProvider o = candidate(openssl, opensslRefused);
    if (o != null) {
      natives.add(o);
    }
    AeadProvider g = candidate(gcrypt, gcryptRefused);
    if (g != null) {
      natives.add(g);
    }
    if (j == null && natives.isEmpty()) {
      throw new AeadException(
          "no AES-256-GCM passed its known-answer test: jdk: "
              + jdkRefused[0]
              + "; accp: "
              + accpRefused[0]
              + "; openssl: "
              + opensslRefused[0]
              + "; gcrypt: "
              + gcryptRefused[0]);
    }
    List<AeadProvider> measured = new ArrayList<>(natives);
    if (j != null) {
      measured.add(j);
    }
    AeadRateCheck.Result r = AeadRateCheck.measure(measured);
    AeadAuto.Planned p =
        AeadAuto.plan(measured, r.rates(), natives.size(), j != null ? measured.size() - 1 : -1);
    return new Choice(
        p.plan(),
        Mode.AUTO,
        p.why()
            + (j == null ? "; the JDK's AES-GCM was refused (" + jdkRefused[0] + ")" : "")
            + "; "
            + r.describe(),
        p.rates(),
        accpRefused[0],
        opensslRefused[0],
        gcryptRefused[0]);
  }
}
