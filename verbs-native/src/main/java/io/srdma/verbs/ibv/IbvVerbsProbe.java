package io.srdma.verbs.ibv;

import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.doctor.VerbsProbe;
import java.util.List;

/**
 * The doctor's questions answered by libibverbs: opening a port runs the provider's start-up checks
 * (layout probe, window-bounds self-test), so what it reports is what a channel would get.
 */
public final class IbvVerbsProbe implements VerbsProbe {
  /** A probe of the real library; nothing native is touched until asked. */
  public IbvVerbsProbe() {}

  @Override
  public String libraryFailure() {
    return Native.loadFailure();
  }

  @Override
  public List<String> deviceNames() {
    return IbvProvider.deviceNames();
  }

  @Override
  public String callBinding() {
    return OpsTable.binding();
  }

  @Override
  public PortProbe probe(String device, int port, int gidIndex) {
    DeviceOptions options = new DeviceOptions().portNumber(port).gidIndex(gidIndex);
    try (IbvDeviceContext ctx = (IbvDeviceContext) new IbvDevice(device).open(options)) {
      DeviceAttributes attributes = ctx.queryDevice();
      return new PortProbe(mtuBytes(ctx.activeMtu()), attributes, null);
    } catch (VerbsException e) {
      return PortProbe.failed(e.getMessage());
    }
  }

  /** {@code enum ibv_mtu} (1 = 256 ... 5 = 4096) in bytes; 0 when out of range. */
  static int mtuBytes(int ibvMtu) {
    return ibvMtu >= 1 && ibvMtu <= 5 ? 128 << ibvMtu : 0;
  }
}
