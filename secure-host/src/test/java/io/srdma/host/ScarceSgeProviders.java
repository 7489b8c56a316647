package io.srdma.host;

import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProvider;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.VerbsException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;

/**
 * Test-only verbs providers (registered for this module's tests through {@code META-INF/services})
 * whose one device is {@link ChannelRig#PROVIDER}'s first, less its scatter/gather entries: {@link
 * Reported} says it takes one SGE a request, {@link Refused} says what the real one says but
 * refuses a queue pair with more than one send SGE (as a device may at some depth). Everything else
 * is the real device's, so a client on them talks to a host on the real provider.
 */
public final class ScarceSgeProviders {
  /** The name of the provider whose device reports one SGE a request. */
  public static final String REPORTED = "test-sge-reported";

  /** The name of the provider whose device refuses queue pairs with several send SGEs. */
  public static final String REFUSED = "test-sge-refused";

  private ScarceSgeProviders() {}

  /** A device that reports {@code maxSge} 1. */
  public static final class Reported extends Base {
    public Reported() {
      super(REPORTED, false);
    }
  }

  /** A device that refuses a queue pair with more than one send SGE. */
  public static final class Refused extends Base {
    public Refused() {
      super(REFUSED, true);
    }
  }

  private abstract static class Base implements RdmaProvider {
    private final String name;
    private final boolean refuse;

    Base(String name, boolean refuse) {
      this.name = name;
      this.refuse = refuse;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String unavailableReason() {
      return null;
    }

    @Override
    public List<Device> devices() {
      return List.of(
          new Device() {
            @Override
            public String name() {
              return name + "0";
            }

            @Override
            public String providerName() {
              return name;
            }

            @Override
            public DeviceContext open(DeviceOptions options) {
              return scarce(RdmaProviders.firstDevice(ChannelRig.PROVIDER).open(options), refuse);
            }
          });
    }
  }

  private static DeviceContext scarce(DeviceContext real, boolean refuse) {
    return (DeviceContext)
        Proxy.newProxyInstance(
            DeviceContext.class.getClassLoader(),
            new Class<?>[] {DeviceContext.class},
            (proxy, m, args) -> {
              Object r = invoke(m, real, args);
              if (m.getName().equals("queryDevice") && !refuse) {
                DeviceAttributes a = (DeviceAttributes) r;
                return new DeviceAttributes(
                    a.maxMessageSize(),
                    a.maxQp(),
                    a.maxMr(),
                    a.maxMw(),
                    a.maxQpWr(),
                    1,
                    a.maxCqe(),
                    a.memoryWindowType2(),
                    a.windowBoundsEnforced(),
                    a.localHeapMemory());
              }
              if (m.getName().equals("allocateProtectionDomain") && refuse) {
                return refusing((ProtectionDomain) r);
              }
              return r;
            });
  }

  private static ProtectionDomain refusing(ProtectionDomain real) {
    return (ProtectionDomain)
        Proxy.newProxyInstance(
            ProtectionDomain.class.getClassLoader(),
            new Class<?>[] {ProtectionDomain.class},
            (proxy, m, args) -> {
              if (m.getName().equals("createQueuePair")
                  && ((QueuePairAttributes) args[0]).maxSendSge() > 1) {
                throw new VerbsException(
                    VerbsException.Reason.INVALID_ARGUMENT,
                    "create_qp",
                    ((QueuePairAttributes) args[0]).maxSendSge()
                        + " send SGEs refused (test device)");
              }
              return invoke(m, real, args);
            });
  }

  private static Object invoke(Method m, Object target, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
