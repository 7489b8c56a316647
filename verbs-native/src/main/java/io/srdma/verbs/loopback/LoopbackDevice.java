package io.srdma.verbs.loopback;

import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The loopback provider's one device, {@code loopback0}; every open is a separate RNIC. */
final class LoopbackDevice implements Device {
  private static final Logger LOG = LoggerFactory.getLogger(LoopbackDevice.class);

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
    if (options.responderCpus() != null) { // said, not silently dropped
      LOG.info(
          "responderCpus {} places nothing: the {} provider has no responder threads",
          options.responderCpus(),
          "loopback (the writer copies)");
    }
    return new LoopbackDeviceContext(this, options);
  }

  @Override
  public String toString() {
    return NAME;
  }
}
