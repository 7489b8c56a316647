package io.srdma.channel.record;

import java.util.List;
import java.util.Locale;

/**
 * One provider's AES-256-GCM rates on one thread, measured by {@link AeadRateCheck}: seal and open
 * MB/s (10^6 bytes of payload per second) at each record size.
 *
 * @param provider the provider's name
 * @param bySize one entry per record size, smallest first
 */
public record AeadRates(String provider, List<Rate> bySize) {
  /**
   * Seal and open rates at one record size.
   *
   * @param size payload bytes per record
   * @param sealMBps records sealed per second times {@code size}, in 10^6 bytes
   * @param openMBps records opened (tag checked) per second times {@code size}
   */
  public record Rate(int size, double sealMBps, double openMBps) {
    /** Microseconds per record sealed. */
    public double sealMicros() {
      return size / sealMBps;
    }
  }

  /** Canonical constructor: keeps an immutable copy. */
  public AeadRates {
    bySize = List.copyOf(bySize);
  }

  /** The rates at {@code size}, or null when not measured. */
  public Rate at(int size) {
    for (Rate r : bySize) {
      if (r.size() == size) {
        return r;
      }
    }
    return null;
  }

  /**
   * The rate at one record size: harmonic mean of its seal and open rates (a stream of such
   * records, each sealed once and opened once, on one core), or NaN when that size was not
   * measured.
   */
  public double scoreAt(int size) {
    Rate r = at(size);
    return r == null ? Double.NaN : 2 / (1 / r.sealMBps() + 1 / r.openMBps());
  }

  /**
   * The geometric mean of {@link #scoreAt} over every size measured: what the rate check watches to
   * tell when its rounds have settled (every size decides a part of the {@link AeadPlan}).
   */
  public double overallScore() {
    double log = 0;
    for (Rate r : bySize) {
      log += Math.log(scoreAt(r.size()));
    }
    return bySize.isEmpty() ? Double.NaN : Math.exp(log / bySize.size());
  }

  /**
   * The bulk score: harmonic mean of the seal and open rates at the bulk sizes (4 KiB up to the
   * largest record, 64 KiB); the rate a stream of records of those sizes, each sealed once and
   * opened once, would run at on one core.
   */
  public double bulkScore() {
    double inverse = 0;
    int n = 0;
    for (Rate r : bySize) {
      if (r.size() >= AeadRateCheck.BULK_FROM) {
        inverse += 1 / r.sealMBps() + 1 / r.openMBps();
        n += 2;
      }
    }
    return n == 0 ? Double.NaN : n / inverse;
  }

  /** E.g. {@code 64 B 0.33/0.35 us, 4 KiB 2900/3100 MB/s, 64 KiB 4200/4400 MB/s (seal/open)}. */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Rate r : bySize) {
      if (b.length() > 0) {
        b.append(", ");
      }
      if (r.size() < AeadRateCheck.BULK_FROM) {
        b.append(
            String.format(
                Locale.ROOT,
                "%d B %.2f/%.2f us",
                r.size(),
                r.size() / r.sealMBps(),
                r.size() / r.openMBps()));
      } else {
        b.append(
            String.format(
                Locale.ROOT, "%d KiB %.0f/%.0f MB/s", r.size() / 1024, r.sealMBps(), r.openMBps()));
      }
    }
    return b.append(" (seal/open)").toString();
  }
}
