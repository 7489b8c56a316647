package io.srdma.channel.record;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the data path's AES-256-GCM once per process: the JDK's or ACCP's (see {@link
 * AeadProvider}). Every candidate must pass the {@link AeadKnownAnswer known-answer test} first;
 * then a short {@link AeadRateCheck rate check} measures each on this machine, and in {@code auto}
 * ACCP is chosen when its bulk score (harmonic mean of seal and open MB/s at 4 KiB and 64 KiB
 * records) is at least {@value #ACCP_MARGIN}× the JDK's; a tie or a small lead stays with the JDK,
 * which is always there and is one native library less to trust. The choice, why, and every
 * candidate's rates are logged once at INFO.
 *
 * <p>Forced by {@link #select(Mode)} ({@code --aead}), else the system property {@value #PROPERTY},
 * else the environment variable {@value #ENV}: {@code auto} | {@code jdk} | {@code accp}. A forced
 * provider that is not available or fails its known-answer test is an {@link AeadException} naming
 * why, never a silent fallback; in {@code auto}, ACCP not loading is logged once at INFO with the
 * reason and the JDK is used.
 *
 * <p>Thread-safe: the choice is made under this class's lock and published once.
 */
public final class AeadSelection {
  /** The system property that forces the choice. */
  public static final String PROPERTY = "srdma.aead";

  /** The environment variable that forces the choice (the property wins). */
  public static final String ENV = "SRDMA_AEAD";

  /** ACCP's bulk score must be at least this multiple of the JDK's to be chosen in auto. */
  public static final double ACCP_MARGIN = 1.10;

  private static final Logger LOG = LoggerFactory.getLogger(AeadSelection.class);
  private static volatile Choice process;

  /** What is asked for. */
  public enum Mode {
    /** The faster of the providers that load and pass their known-answer test. */
    AUTO,
    /** The JDK's AES-GCM. */
    JDK,
    /** ACCP's, or a start-up error. */
    ACCP;

    /**
     * {@code auto}, {@code jdk} or {@code accp}, any case.
     *
     * @throws AeadException for anything else
     */
    public static Mode parse(String value, String where) {
      for (Mode m : values()) {
        if (m.label().equalsIgnoreCase(value.trim())) {
          return m;
        }
      }
      throw new AeadException(where + "=" + value + " is not one of auto, jdk, accp");
    }

    /** Lower-case name, as written in options. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * The choice.
   *
   * @param provider the provider the data path uses
   * @param mode what was asked for
   * @param reason why this provider, in words
   * @param rates the rate check's result of every candidate measured, the chosen one first
   * @param accpUnavailable why ACCP is not a candidate, or null when it is (or was not tried)
   */
  public record Choice(
      AeadProvider provider,
      Mode mode,
      String reason,
      List<AeadRates> rates,
      String accpUnavailable) {
    /** Canonical constructor: keeps an immutable copy of the rates. */
    public Choice {
      rates = List.copyOf(rates);
    }

    /** The rates of the provider in use. */
    public AeadRates chosenRates() {
      return rates.get(0);
    }

    /** One line: provider, why, every candidate's rates. */
    public String summary() {
      StringBuilder b =
          new StringBuilder()
              .append(provider.name())
              .append(" (")
              .append(provider.description())
              .append("): ")
              .append(reason);
      for (AeadRates r : rates) {
        b.append("; ").append(r.provider()).append(' ').append(r);
      }
      if (accpUnavailable != null) {
        b.append("; accp unavailable: ").append(accpUnavailable);
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
    c = choose(mode, AeadProvider::jdk, AeadProvider::accp);
    if (c.accpUnavailable() != null && c.accpUnavailable().contains("known-answer")) {
      LOG.warn("ACCP not used: {}", c.accpUnavailable());
    } else if (c.accpUnavailable() != null) {
      LOG.info("ACCP not used: {}", c.accpUnavailable());
    }
    LOG.info("data-path AEAD: {}", c.summary());
    process = c;
    return c;
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

  /**
   * Chooses among the candidates these suppliers give (a supplier throws {@link AeadException} when
   * its provider is unavailable). Does not log.
   */
  static Choice choose(Mode mode, Supplier<AeadProvider> jdk, Supplier<AeadProvider> accp) {
    switch (mode) {
      case JDK -> {
        AeadProvider j = forced(jdk, "jdk");
        AeadRateCheck.Result r = AeadRateCheck.measure(List.of(j));
        return new Choice(
            j, mode, "forced (" + PROPERTY + "=jdk); " + r.describe(), r.rates(), null);
      }
      case ACCP -> {
        AeadProvider a = forced(accp, "accp");
        List<AeadProvider> measured = new ArrayList<>(List.of(a));
        try {
          AeadProvider j = jdk.get();
          AeadKnownAnswer.check(j);
          measured.add(j); // for comparison only
        } catch (AeadException e) {
          // the JDK is not needed when ACCP is forced; its rates are just not shown
        }
        AeadRateCheck.Result r = AeadRateCheck.measure(measured);
        return new Choice(
            a, mode, "forced (" + PROPERTY + "=accp); " + r.describe(), r.rates(), null);
      }
      default -> {
        return auto(jdk, accp);
      }
    }
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

  private static Choice auto(Supplier<AeadProvider> jdk, Supplier<AeadProvider> accp) {
    AeadProvider j = null;
    String jdkRefused = null;
    try {
      j = jdk.get();
      AeadKnownAnswer.check(j);
    } catch (AeadException e) {
      j = null;
      jdkRefused = e.getMessage();
    }
    AeadProvider a = null;
    String accpRefused = null;
    try {
      a = accp.get();
      AeadKnownAnswer.check(a);
    } catch (AeadException e) {
      a = null;
      accpRefused = e.getMessage();
    }
    if (j == null && a == null) {
      throw new AeadException(
          "no AES-256-GCM passed its known-answer test: jdk: "
              + jdkRefused
              + "; accp: "
              + accpRefused);
    }
    if (a == null) {
      AeadRateCheck.Result r = AeadRateCheck.measure(List.of(j));
      return new Choice(
          j, Mode.AUTO, "auto: the only candidate; " + r.describe(), r.rates(), accpRefused);
    }
    if (j == null) {
      AeadRateCheck.Result r = AeadRateCheck.measure(List.of(a));
      return new Choice(
          a,
          Mode.AUTO,
          "auto: the JDK's AES-GCM was refused (" + jdkRefused + "); " + r.describe(),
          r.rates(),
          null);
    }
    AeadRateCheck.Result r = AeadRateCheck.measure(List.of(a, j));
    List<AeadRates> rates = r.rates();
    double ratio = rates.get(0).bulkScore() / rates.get(1).bulkScore();
    String why =
        String.format(
            Locale.ROOT,
            "auto: accp's bulk rate (4 and 64 KiB, seal and open) is %.2fx the JDK's, %s %.2fx; %s",
            ratio,
            ratio >= ACCP_MARGIN ? "at least" : "below",
            ACCP_MARGIN,
            r.describe());
    return ratio >= ACCP_MARGIN
        ? new Choice(a, Mode.AUTO, why, rates, null)
        : new Choice(j, Mode.AUTO, why, List.of(rates.get(1), rates.get(0)), null);
  }
}
