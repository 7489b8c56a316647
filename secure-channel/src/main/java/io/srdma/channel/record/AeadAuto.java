package io.srdma.channel.record;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rule of {@link AeadSelection}'s {@code auto} mode: from the {@link AeadRateCheck rate
 * check}'s rates of every candidate, the {@link AeadPlan} — the provider fastest at 64 B for small
 * records, the one fastest at 64 KiB from the size up to which it stays ahead, each only where it
 * leads the JDK by {@value AeadSelection#NATIVE_MARGIN}x, and two providers only where each leads
 * the other by that margin at its end (else the one picked for 64 KiB, or for 64 B, takes every
 * size) — and why, in words (see {@link AeadSelection}).
 *
 * <p>Stateless; thread-safe.
 */
final class AeadAuto {
  /** The size that picks the provider of small records. */
  static final int SMALL_RECORD = AeadRateCheck.SIZES[0];

  /** The size that picks the provider of large records. */
  static final int LARGE_RECORD = AeadRateCheck.SIZES[AeadRateCheck.SIZES.length - 1];

  private AeadAuto() {}

  /**
   * Auto's plan, why in words, and the rates with the plan's first.
   *
   * @param plan the provider of each record size
   * @param why the reason, without the rate check's own line
   * @param rates every candidate's rates, the plan's providers first
   */
  record Planned(AeadPlan plan, String why, List<AeadRates> rates) {}

  /**
   * Auto's rule (see the class comment) over measured candidates: the first {@code natives} are the
   * native libraries, the JDK is at {@code jdkAt} (-1 when it is not a candidate); {@code rates}
   * are in the order of {@code measured}.
   */
  static Planned plan(List<AeadProvider> measured, List<AeadRates> rates, int natives, int jdkAt) {
    int small = fastestAt(rates, natives, jdkAt, SMALL_RECORD);
    int large = fastestAt(rates, natives, jdkAt, LARGE_RECORD);
    // A split needs a clear lead at each end over the other end's provider, as a native library
    // needs one over the JDK: within the margin the plan keeps one provider (on a noisy start-up
    // two providers a few percent apart at 64 B trade places between checks, and the one a check
    // favoured by a few percent ran the data path at a third of the other's speed, session 40).
    String within = null;
    if (small != large) {
      if (!leads(rates, large, small, LARGE_RECORD)) {
        within = within(rates, small, large, LARGE_RECORD, jdkAt);
        large = small;
      } else if (!leads(rates, small, large, SMALL_RECORD)) {
        within = within(rates, large, small, SMALL_RECORD, jdkAt);
        small = large;
      }
    }
    AeadPlan plan;
    String why;
    if (within != null) {
      plan = AeadPlan.single(measured.get(small));
      why = "auto: " + measured.get(small).name() + " " + within;
    } else if (small == large) {
      plan = AeadPlan.single(measured.get(small));
      why =
          "auto: "
              + measured.get(small).name()
              + " "
              + lead(rates, small, jdkAt, SMALL_RECORD)
              + " and "
              + lead(rates, small, jdkAt, LARGE_RECORD);
    } else {
      int bulkFrom = LARGE_RECORD;
      List<String> between = new ArrayList<>();
      int[] sizes = AeadRateCheck.SIZES;
      boolean ahead = true;
      for (int i = sizes.length - 2; i > 0; i--) { // downwards while the large one stays ahead
        double ratio = rates.get(large).scoreAt(sizes[i]) / rates.get(small).scoreAt(sizes[i]);
        ahead &= ratio > 1;
        if (ahead) {
          bulkFrom = sizes[i];
        }
        between.add(0, String.format(Locale.ROOT, "%.2fx at %s", ratio, AeadPlan.size(sizes[i])));
      }
      plan = AeadPlan.split(measured.get(small), measured.get(large), bulkFrom);
      why =
          String.format(
              Locale.ROOT,
              "auto: %s %s, %s %s; %s against %s: %s",
              measured.get(small).name(),
              lead(rates, small, jdkAt, SMALL_RECORD),
              measured.get(large).name(),
              lead(rates, large, jdkAt, LARGE_RECORD),
              measured.get(large).name(),
              measured.get(small).name(),
              String.join(", ", between));
    }
    List<AeadRates> ordered = new ArrayList<>();
    ordered.add(rates.get(small));
    if (large != small) {
      ordered.add(rates.get(large));
    }
    for (int i = 0; i < rates.size(); i++) {
      if (i != small && i != large) {
        ordered.add(rates.get(i));
      }
    }
    return new Planned(plan, why, ordered);
  }

  /**
   * Which provider auto chooses for records of {@code size} bytes: of the first {@code natives}
   * rates (the native libraries'), the one with the highest {@link AeadRates#scoreAt score} there,
   * if it is at least {@value AeadSelection#NATIVE_MARGIN}x the JDK's (at {@code jdk}; -1 when
   * there is no JDK); else the JDK.
   *
   * @return an index into {@code rates}, or -1 when there are no candidates
   */
  static int fastestAt(List<AeadRates> rates, int natives, int jdk, int size) {
    int best = -1;
    for (int i = 0; i < natives; i++) {
      if (best < 0 || rates.get(i).scoreAt(size) > rates.get(best).scoreAt(size)) {
        best = i;
      }
    }
    if (jdk < 0 || best < 0) {
      return best < 0 ? jdk : best;
    }
    return leads(rates, best, jdk, size) ? best : jdk;
  }

  /** Whether {@code a}'s score at {@code size} is at least the margin times {@code b}'s. */
  private static boolean leads(List<AeadRates> rates, int a, int b, int size) {
    return rates.get(a).scoreAt(size) >= AeadSelection.NATIVE_MARGIN * rates.get(b).scoreAt(size);
  }

  /**
   * Why {@code kept} has every size although {@code other} was the pick at {@code size}: its lead
   * at the other end, then e.g. {@code for every size: at 64 B jdk's rate is 1.08x its own, under
   * the 1.10x a split needs}.
   */
  private static String within(List<AeadRates> rates, int kept, int other, int size, int jdk) {
    int keptAt = size == SMALL_RECORD ? LARGE_RECORD : SMALL_RECORD;
    return String.format(
        Locale.ROOT,
        "%s, and for every size: at %s %s's rate is %.2fx its own, under the %.2fx a split needs",
        lead(rates, kept, jdk, keptAt),
        AeadPlan.size(size),
        rates.get(other).provider(),
        rates.get(other).scoreAt(size) / rates.get(kept).scoreAt(size),
        AeadSelection.NATIVE_MARGIN);
  }

  /** E.g. {@code fastest at 64 B (1.48x the JDK's)}, or why the JDK kept that size. */
  private static String lead(List<AeadRates> rates, int chosen, int jdk, int size) {
    String at = AeadPlan.size(size);
    if (jdk < 0) {
      return "the fastest at " + at + " (no JDK candidate)";
    }
    if (chosen == jdk) {
      return String.format(
          Locale.ROOT,
          "at %s (no native library at least %.2fx its rate there)",
          at,
          AeadSelection.NATIVE_MARGIN);
    }
    return String.format(
        Locale.ROOT,
        "the fastest at %s (%.2fx the JDK's)",
        at,
        rates.get(chosen).scoreAt(size) / rates.get(jdk).scoreAt(size));
  }
}
