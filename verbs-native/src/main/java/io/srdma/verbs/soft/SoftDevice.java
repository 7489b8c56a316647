package io.srdma.verbs.soft;

import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;

/** The soft provider's one device, {@code soft0}; every open gets its own responder port. */
final class SoftDevice implements Device {
  static final String NAME = "soft0";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String providerName() {
    return SoftProvider.NAME;
  }

  @Override
  public DeviceContext open(DeviceOptions options) {
    return new SoftDeviceContext(this, options);
  }

  @Override
  public String toString() {
    return NAME;
  }
}
