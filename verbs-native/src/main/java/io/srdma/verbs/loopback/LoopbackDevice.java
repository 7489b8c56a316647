package io.srdma.verbs.loopback;

import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;

/** The loopback provider's one device, {@code loopback0}; every open is a separate RNIC. */
final class LoopbackDevice implements Device {
  static final String NAME = "loopback0";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String providerName() {
    return LoopbackProvider.NAME;
  }

  @Override
  public DeviceContext open(DeviceOptions options) {
    return new LoopbackDeviceContext(this, options);
  }

  @Override
  public String toString() {
    return NAME;
  }
}
