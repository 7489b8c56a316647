package io.srdma.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds providers through {@link ServiceLoader} and selects one by name: {@code soft}, {@code ibv},
 * or {@code auto} (ibv when it can run and has a device, else soft). The choice of {@code auto} is
 * always logged, and a fall back to soft is logged as a warning with the reason: never silent.
 */
public final class RdmaProviders {
  /** System property naming the provider; {@link #PROVIDER_DEFAULT} when absent. */
  public static final String PROVIDER_PROP_NAME = "srdma.provider";

  /** Default provider name. */
  public static final String PROVIDER_DEFAULT = "soft";

  /** The name that picks ibv when possible, else soft. */
  public static final String AUTO = "auto";

  private static final Logger LOG = LoggerFactory.getLogger(RdmaProviders.class);

  private RdmaProviders() {}

  /** All installed providers, usable here or not. */
  public static List<RdmaProvider> installed() {
    List<RdmaProvider> all = new ArrayList<>();
    ServiceLoader.load(RdmaProvider.class, RdmaProviders.class.getClassLoader()).forEach(all::add);
    return all;
  }

  /** The provider named by {@link #PROVIDER_PROP_NAME}, or the default. */
  public static RdmaProvider fromSystemProperty() {
    return select(System.getProperty(PROVIDER_PROP_NAME, PROVIDER_DEFAULT));
  }

  /**
   * The provider called {@code name}, usable here.
   *
   * @throws VerbsException INVALID_ARGUMENT for an unknown name, PROVIDER_UNAVAILABLE when it is
   *     installed but cannot run (the message says what to install)
   */
  public static RdmaProvider select(String name) {
    List<RdmaProvider> all = installed();
    if (AUTO.equals(name)) {
      return auto(all);
    }
    for (RdmaProvider p : all) {
      if (p.name().equals(name)) {
        String why = p.unavailableReason();
        if (why != null) {
          throw new VerbsException(
              VerbsException.Reason.PROVIDER_UNAVAILABLE,
              "select_provider",
              "provider '" + name + "' cannot run here: " + why);
        }
        return p;
      }
    }
    throw new VerbsException(
        VerbsException.Reason.INVALID_ARGUMENT,
        "select_provider",
        "no provider named '" + name + "'; installed: " + names(all) + ", or 'auto'");
  }

  /**
   * The first device of the provider called {@code name}.
   *
   * @throws VerbsException PROVIDER_UNAVAILABLE when the provider has no device
   */
  public static Device firstDevice(String name) {
    RdmaProvider p = select(name);
    List<Device> devices = p.devices();
    if (devices.isEmpty()) {
      throw new VerbsException(
          VerbsException.Reason.PROVIDER_UNAVAILABLE,
          "get_device_list",
          "provider '" + p.name() + "' found no RDMA device");
    }
    return devices.get(0);
  }

  private static RdmaProvider auto(List<RdmaProvider> all) {
    String ibvWhy = "provider 'ibv' is not installed";
    for (RdmaProvider p : all) {
      if (p.name().equals("ibv")) {
        ibvWhy = p.unavailableReason();
        if (ibvWhy == null && p.devices().isEmpty()) {
          ibvWhy = "libibverbs found no RDMA device";
        }
        if (ibvWhy == null) {
          LOG.info("RDMA provider auto: using 'ibv' (device {})", p.devices().get(0).name());
          return p;
        }
      }
    }
    LOG.warn(
        "RDMA provider auto: FALLING BACK to 'soft' (RDMA over TCP, no kernel bypass) because {}",
        ibvWhy);
    return select("soft");
  }

  private static String names(List<RdmaProvider> all) {
    return all.stream().map(RdmaProvider::name).collect(Collectors.joining(", ", "[", "]"));
  }
}
