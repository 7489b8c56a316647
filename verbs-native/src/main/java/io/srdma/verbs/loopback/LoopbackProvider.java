package io.srdma.verbs.loopback;

import io.srdma.verbs.Device;
import io.srdma.verbs.RdmaProvider;
import java.util.List;

/**
 * The {@code loopback} provider: an in-process RNIC whose transport is a memory copy. Queue pairs
 * connect only to queue pairs of the same JVM. It performs the soft provider's access checks (PD,
 * window bound to the QP, overflow-safe bounds, rights, unpredictable rkeys, invalidation) on the
 * posting thread and copies synchronously, so it shows what the layers above cost when the
 * transport is free. Never chosen by {@code auto}; not a security boundary between processes.
 * Thread-safe.
 */
public final class LoopbackProvider implements RdmaProvider {
  /** The provider's name. */
  public static final String NAME = "loopback";

  private static final List<Device> DEVICES = List.of(new LoopbackDevice());

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public List<Device> devices() {
    return DEVICES;
  }
}
