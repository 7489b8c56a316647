package io.srdma.verbs.ibv;

import io.srdma.verbs.Device;
import io.srdma.verbs.RdmaProvider;
import io.srdma.verbs.VerbsException;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code ibv} provider: real RDMA verbs through rdma-core's libibverbs, bound with jnr-ffi; on
 * Java 22+ the per-message calls (post_send, post_recv, post_srq_recv, poll_cq) are critical
 * foreign-function downcalls, {@code srdma doctor} names which ({@code docs/verbs.md}). Runs
 * wherever libibverbs finds a device: an RDMA NIC (mlx5, irdma, ...) or Soft-RoCE ({@code rdma link
 * add rxe0 type rxe netdev eth0}). See {@code docs/softroce.md}.
 *
 * <p>Connection address ({@link io.srdma.verbs.ConnectionInfo#address()}): 19 bytes, the GID of the
 * port's configured GID index (16 bytes), the port's LID (big-endian u16, 0 on RoCE) and the port
 * number (u8). Peers connect with RoCE v2 / GRH addressing on that GID.
 */
public final class IbvProvider implements RdmaProvider {
  /** The provider's name. */
  public static final String NAME = "ibv";

  /** Creates the provider; nothing native is touched until it is asked. */
  public IbvProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String unavailableReason() {
    String failure = Native.loadFailure();
    if (failure != null) {
      return failure;
    }
    if (deviceNames().isEmpty()) {
      return "libibverbs found no RDMA device: load the NIC's driver (e.g. mlx5_ib) or create a"
          + " Soft-RoCE device ('modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0',"
          + " package iproute2), and install the user-space drivers (package"
          + " ibverbs-providers); 'ibv_devices' (ibverbs-utils) lists what libibverbs sees";
    }
    return null;
  }

  @Override
  public List<Device> devices() {
    String failure = Native.loadFailure();
    if (failure != null) {
      throw new VerbsException(
          VerbsException.Reason.PROVIDER_UNAVAILABLE, "get_device_list", failure);
    }
    List<Device> out = new ArrayList<>();
    for (String name : deviceNames()) {
      out.add(new IbvDevice(name));
    }
    return out;
  }

  /** Names of the devices libibverbs lists now. */
  static List<String> deviceNames() {
    List<String> names = new ArrayList<>();
    long list = Native.lib().ibv_get_device_list(0);
    if (list == 0) {
      return names;
    }
    try {
      for (int i = 0; ; i++) {
        long device = Native.getLong(list + 8L * i);
        if (device == 0) {
          break;
        }
        names.add(Native.lib().ibv_get_device_name(device));
      }
    } finally {
      Native.lib().ibv_free_device_list(list);
    }
    return names;
  }
}
