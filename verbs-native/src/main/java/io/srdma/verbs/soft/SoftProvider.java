package io.srdma.verbs.soft;

import io.srdma.verbs.Device;
import io.srdma.verbs.RdmaProvider;
import java.util.List;

/**
 * The {@code soft} provider: a software RNIC in user space, RDMA semantics over TCP. Runs on any
 * machine; gives RDMA's access checks and completion semantics, not its kernel bypass or speed.
 */
public final class SoftProvider implements RdmaProvider {
  /** The provider's name. */
  public static final String NAME = "soft";

  private static final List<Device> DEVICES = List.of(new SoftDevice());

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
