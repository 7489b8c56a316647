package io.srdma.verbs.doctor;

import io.srdma.verbs.DeviceAttributes;
import java.util.List;

/**
 * What the doctor asks libibverbs. {@link io.srdma.verbs.ibv.IbvVerbsProbe} asks the real library;
 * tests hand the doctor a fake.
 */
public interface VerbsProbe {
  /** Why libibverbs cannot be used (not installed, no symbol ...), or null when it loaded. */
  String libraryFailure();

  /** The devices libibverbs lists (only called when {@link #libraryFailure()} is null). */
  List<String> deviceNames();

  /**
   * How the provider makes its per-message calls (post_send, post_recv, post_srq_recv, poll_cq):
   * {@code FFM downcalls} or {@code jffi, not downcalls: <why>} (only called when {@link
   * #libraryFailure()} is null).
   */
  String callBinding();

  /**
   * Opens {@code device} on {@code port} with {@code gidIndex}, which runs the provider's start-up
   * self-test, and reports what it found.
   */
  PortProbe probe(String device, int port, int gidIndex);

  /**
   * The answer for one port.
   *
   * @param activeMtuBytes the port's active MTU in bytes (256..4096), 0 when unknown
   * @param attributes the device's attributes, including the window findings; null on failure
   * @param failure why the device could not be opened or tested, or null
   */
  record PortProbe(int activeMtuBytes, DeviceAttributes attributes, String failure) {
    /** A failed probe. */
    public static PortProbe failed(String why) {
      return new PortProbe(0, null, why);
    }
  }
}
