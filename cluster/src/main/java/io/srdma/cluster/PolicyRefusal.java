package io.srdma.cluster;

import java.time.Instant;
import java.util.Locale;

/**
 * A pushed policy a host refused, as it reports it (its last one, under {@code
 * PREFIX/hosts/HOST/policy}; the console and {@code srdma policy status} show it).
 *
 * @param reason why
 * @param serial the serial the envelope carried, or 0 if it had none (unsigned)
 * @param at when the host refused it
 */
public record PolicyRefusal(Reason reason, long serial, Instant at) {
  /** Why a host refused a pushed policy. */
  public enum Reason {
    /** Not a signed policy (an unsigned text, or a malformed envelope). */
    UNSIGNED,
    /** Signed by the deployment CA, but for another deployment's prefix. */
    FOREIGN_DEPLOYMENT,
    /** Its signature does not verify: signed by another CA, or altered. */
    OTHER_CA,
    /** A serial below the highest applied, or equal to it with another text: a replay. */
    ROLLBACK,
    /** Validly signed but not put in force: not a valid policy, or its serial could not be kept. */
    INVALID;

    /** The lower-case name used on /metrics and in the JSON reports, e.g. {@code other_ca}. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The reason of a {@link #label()}.
     *
     * @throws IllegalArgumentException if there is none
     */
    public static Reason ofLabel(String label) {
      return valueOf(label.toUpperCase(Locale.ROOT));
    }
  }
}
