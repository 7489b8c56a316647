package io.srdma.channel.record;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the data path's AES-256-GCM once per process: the JDK's, ACCP's, OpenSSL libcrypto's,
 * libgcrypt's or intel-ipsec-mb's (see {@link AeadProvider}), as an {@link AeadPlan} — a provider
 * for small records and one for large ones, the same one where one is fastest at both. Every
 * candidate must pass the {@link AeadKnownAnswer known-answer test} first; then a short {@link
 * AeadRateCheck rate check} measures each on this machine as the data path pays for it (the JCE
 * ones on arrays plus the copy into and out of the registered slot, openssl, gcrypt and ipsec-mb on
 * native memory). In {@code auto}, at each of 64 B and 64 KiB the fastest native library there
 * (score: harmonic mean of its seal and open MB/s at that size) is chosen when it is at least
 * {@value #NATIVE_MARGIN}× the JDK's score there, else the JDK — a tie or a small lead stays with
 * the JDK, which is always there and is one native library less to trust. Two providers only where
 * each leads the other by that margin at its own end; otherwise the one picked at the other end
 * takes every size (a split for a few percent flipped between start-ups, and the JDK of one
 * start-up, measured 9 % behind libgcrypt at 64 B, kept 64 B records and sealed them at a third of
 * libgcrypt's rate in the data path). The 64 B winner seals and opens records under the plan's
 * {@link AeadPlan#bulkFrom() bulk size}, the 64 KiB winner the rest; the bulk size is the smallest
 * size measured from which up the 64 KiB winner is the faster of the two at every size measured (4
 * KiB, 16 KiB, 64 KiB: records between two sizes go to the provider faster at the size below them).
 * On a CPU where one library is fastest per small record and another per large one (libgcrypt's few
 * calls against AWS-LC's AVX-512 code, say) each size gets the faster, instead of the choice
 * flipping with the noise of a short check between two providers each far ahead at one end. The
 * choice, why, and every candidate's rates are logged once at INFO.
 *
 * <p>Forced by {@link #select(Mode)} ({@code --aead}), else the system property {@value #PROPERTY},
 * else the environment variable {@value #ENV}: {@code auto} | {@code jdk} | {@code accp} | {@code
 * openssl} | {@code gcrypt} | {@code ipsec-mb}. A forced provider that is not available or fails
 * its known-answer test is an {@link AeadException} naming why, never a silent fallback; in {@code
 * auto}, a native library not loading is logged once at INFO with the reason (at WARN when it
 * loaded but failed its known-answer test) and the others are used.
 *
 * <p>Thread-safe: the choice is made under this class's lock and published once.
 */
public final class AeadSelection {
  /** The system property that forces the choice. */
  public static final String PROPERTY = "srdma.aead";

  /** The environment variable that forces the choice (the property wins). */
  public static final String ENV = "SRDMA_AEAD";

  /**
   * A native library's (ACCP's, openssl's, gcrypt's, ipsec-mb's) score at a size must be at least
   * this multiple of the JDK's for it to be chosen for that size in auto.
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
    GCRYPT,
    /** intel-ipsec-mb on native memory, or a start-up error. */
    IPSEC_MB;

    /**
     * {@code auto}, {@code jdk}, {@code accp}, {@code openssl}, {@code gcrypt} or {@code ipsec-mb},
     * any case.
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
          where + "=" + value + " is not one of auto, jdk, accp, openssl, gcrypt, ipsec-mb");
    }

    /** Lower-case name, as written in options ({@code ipsec-mb} with its hyphen). */
    public String label() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
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
   * @param ipsecMbUnavailable why ipsec-mb is not a candidate, or null when it is (or was not
   *     tried)
   */
  public record Choice(
      AeadPlan plan,
      Mode mode,
      String reason,
      List<AeadRates> rates,
      String accpUnavailable,
      String opensslUnavailable,
      String gcryptUnavailable,
      String ipsecMbUnavailable) {
    /** Canonical constructor: keeps an immutable copy of the rates. */
    public Choice {
      rates = List.copyOf(rates);
    }

    /** A choice in which ipsec-mb was not tried. */
    public Choice(
        AeadPlan plan,
        Mode mode,
        String reason,
        List<AeadRates> rates,
        String accpUnavailable,
        String opensslUnavailable,
        String gcryptUnavailable) {
      this(plan, mode, reason, rates, accpUnavailable, opensslUnavailable, gcryptUnavailable, null);
    }

    /** A choice of one provider in which neither openssl nor gcrypt was tried. */
    public Choice(
        AeadProvider provider,
        Mode mode,
        String reason,
        List<AeadRates> rates,
        String accpUnavailable) {
      this(AeadPlan.single(provider), mode, reason, rates, accpUnavailable, null, null, null);
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
      if (ipsecMbUnavailable != null) {
        b.append("; ipsec-mb unavailable: ").append(ipsecMbUnavailable);
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
            AeadProvider::gcrypt,
            AeadProvider::ipsecMb);
    logUnavailable("ACCP", c.accpUnavailable());
    logUnavailable("openssl", c.opensslUnavailable());
    logUnavailable("gcrypt", c.gcryptUnavailable());
    logUnavailable("ipsec-mb", c.ipsecMbUnavailable());
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

  /** As {@link #choose(Mode, Supplier, Supplier, Supplier, Supplier, Supplier)}, no ipsec-mb. */
  static Choice choose(
      Mode mode,
      Supplier<AeadProvider> jdk,
      Supplier<AeadProvider> accp,
      Supplier<AeadProvider> openssl,
      Supplier<AeadProvider> gcrypt) {
    return choose(mode, jdk, accp, openssl, gcrypt, NOT_TRIED);
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
      Supplier<AeadProvider> gcrypt,
      Supplier<AeadProvider> ipsecMb) {
    if (mode == Mode.AUTO) {
      return auto(jdk, accp, List.of(openssl, gcrypt, ipsecMb));
    }
    AeadProvider forced =
        switch (mode) {
          case JDK -> forced(jdk, "jdk");
          case ACCP -> forced(accp, "accp");
          case OPENSSL -> forced(openssl, "openssl");
          case GCRYPT -> forced(gcrypt, "gcrypt");
          default -> forced(ipsecMb, "ipsec-mb");
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

  /** The native libraries' names after ACCP, in {@code auto}'s order of suppliers. */
  private static final String[] LIBRARIES = {"openssl", "gcrypt", "ipsec-mb"};

  private static Choice auto(
      Supplier<AeadProvider> jdk, Supplier<AeadProvider> accp, List<Supplier<AeadProvider>> libs) {
    String[] jdkRefused = new String[1];
    String[] accpRefused = new String[1];
    String[] libRefused = new String[libs.size()];
    AeadProvider j = candidate(jdk, jdkRefused);
    List<AeadProvider> natives = new ArrayList<>();
    AeadProvider a = candidate(accp, accpRefused);
    if (a != null) {
      natives.add(a);
    }
    for (int i = 0; i < libs.size(); i++) {
      String[] refused = new String[1];
      AeadProvider p = candidate(libs.get(i), refused);
      libRefused[i] = refused[0];
      if (p != null) {
        natives.add(p);
      }
    }
    if (j == null && natives.isEmpty()) {
      StringBuilder why =
          new StringBuilder("no AES-256-GCM passed its known-answer test: jdk: ")
              .append(jdkRefused[0])
              .append("; accp: ")
              .append(accpRefused[0]);
      for (int i = 0; i < libs.size(); i++) {
        why.append("; ").append(LIBRARIES[i]).append(": ").append(libRefused[i]);
      }
      throw new AeadException(why.toString());
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
        libRefused[0],
        libRefused[1],
        libRefused[2]);
  }
}
