package io.srdma.verbs.ibv;

import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.VerbsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A libibverbs device, found by name each time it is opened. */
final class IbvDevice implements Device {
  private static final Logger LOG = LoggerFactory.getLogger(IbvDevice.class);

  private final String name;

  IbvDevice(String name) {
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String providerName() {
    return IbvProvider.NAME;
  }

  @Override
  public DeviceContext open(DeviceOptions options) {
    if (options.responderCpus() != null) { // said, not silently dropped
      LOG.info(
          "responderCpus {} places nothing: the {} provider has no responder threads",
          options.responderCpus(),
          "ibv (the RNIC responds)");
    }
    options.conclude();
    long context = openByName();
    IbvDeviceContext ctx;
    try {
      ctx = new IbvDeviceContext(this, context, options);
    } catch (RuntimeException e) {
      Native.lib().ibv_close_device(context);
      throw e;
    }
    try {
      ctx.startUpChecks();
    } catch (RuntimeException e) {
      try {
        ctx.close();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return ctx;
  }

  private long openByName() {
    long list = Native.lib().ibv_get_device_list(0);
    if (list == 0) {
      throw Errors.of("get_device_list", Errors.ENOSYS, "listing RDMA devices");
    }
    try {
      for (int i = 0; ; i++) {
        long device = Native.getLong(list + 8L * i);
        if (device == 0) {
          throw new VerbsException(
              VerbsException.Reason.PROVIDER_UNAVAILABLE,
              "open_device",
              "device " + name + " is gone ('ibv_devices' lists what libibverbs sees)");
        }
        if (name.equals(Native.lib().ibv_get_device_name(device))) {
          long context = Native.lib().ibv_open_device(device);
          if (context == 0) {
            throw Errors.of("open_device", Native.lastError(), name);
          }
          return context;
        }
      }
    } finally {
      Native.lib().ibv_free_device_list(list);
    }
  }

  @Override
  public String toString() {
    return "ibv device " + name;
  }
}
