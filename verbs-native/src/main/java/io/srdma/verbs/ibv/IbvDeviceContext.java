package io.srdma.verbs.ibv;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.internal.LiveChildren;

/** An open libibverbs device ({@code struct ibv_context}) with its port and GID read once. */
final class IbvDeviceContext implements DeviceContext {
  /** {@code IBV_PORT_ACTIVE}. */
  private static final int PORT_ACTIVE = 4;

  private final IbvDevice device;
  private final long context;
  private final DeviceOptions options;
  private final OpsTable ops;
  private final LiveChildren children = new LiveChildren();
  private final int portNumber;
  private final int gidIndex;
  private final int activeMtu;
  private final int lid;
  private final byte[] gid = new byte[Structs.GID_SIZE];
  private final long maxMessageSize;
  private final int maxQp;
  private final int maxQpWr;
  private final int maxSge;
  private final int maxCqe;
  private final int maxMr;
  private final int maxMw;
  private final int maxQpRdAtom;
  private final int maxQpInitRdAtom;
  private final boolean mwType2;
  private volatile boolean windowBoundsEnforced;
  private boolean closed;

  IbvDeviceContext(IbvDevice device, long context, DeviceOptions options) {
    this.device = device;
    this.context = context;
    this.options = options;
    this.portNumber = options.portNumber();
    this.gidIndex = options.gidIndex();
    this.ops = new OpsTable(context);
    long attr = Native.allocate(Math.max(Structs.DeviceAttr.SIZE, Structs.PortAttr.SIZE) + 256L);
    try {
      int rc = Native.lib().ibv_query_device(context, attr);
      if (rc != 0) {
        throw Errors.of("query_device", rc, device.name());
      }
      maxQp = Native.getInt(attr + Structs.DeviceAttr.MAX_QP);
      maxQpWr = Native.getInt(attr + Structs.DeviceAttr.MAX_QP_WR);
      maxSge = Native.getInt(attr + Structs.DeviceAttr.MAX_SGE);
      maxCqe = Native.getInt(attr + Structs.DeviceAttr.MAX_CQE);
      maxMr = Native.getInt(attr + Structs.DeviceAttr.MAX_MR);
      maxMw = Native.getInt(attr + Structs.DeviceAttr.MAX_MW);
      maxQpRdAtom = Native.getInt(attr + Structs.DeviceAttr.MAX_QP_RD_ATOM);
      maxQpInitRdAtom = Native.getInt(attr + Structs.DeviceAttr.MAX_QP_INIT_RD_ATOM);
      int caps = Native.getInt(attr + Structs.DeviceAttr.DEVICE_CAP_FLAGS);
      mwType2 = (caps & Structs.DeviceAttr.CAP_MW_TYPE_2) != 0;
      int ports = Native.getByte(attr + Structs.DeviceAttr.PHYS_PORT_CNT) & 0xFF;
      LayoutProbe.require(
          maxQp > 0 && maxQpWr > 0 && maxSge > 0 && maxCqe > 0 && ports >= 1,
          "ibv_device_attr",
          "max_qp=" + maxQp + " max_qp_wr=" + maxQpWr + " max_sge=" + maxSge + " ports=" + ports);
      if (portNumber > ports) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT,
            "query_port",
            device.name() + " has " + ports + " port(s), port " + portNumber + " was asked for");
      }
      Native.MEMORY.setMemory(attr, Structs.PortAttr.SIZE + 256L, (byte) 0);
      rc = Native.lib().ibv_query_port(context, (byte) portNumber, attr);
      if (rc != 0) {
        throw Errors.of("query_port", rc, device.name() + " port " + portNumber);
      }
      int state = Native.getInt(attr + Structs.PortAttr.STATE);
      activeMtu = Native.getInt(attr + Structs.PortAttr.ACTIVE_MTU);
      lid = Native.getShort(attr + Structs.PortAttr.LID) & 0xFFFF;
      int gidTableLength = Native.getInt(attr + Structs.PortAttr.GID_TBL_LEN);
      maxMessageSize = Native.getInt(attr + Structs.PortAttr.MAX_MSG_SZ) & 0xFFFFFFFFL;
      LayoutProbe.require(
          activeMtu >= 1 && activeMtu <= 5 && gidTableLength >= 0,
          "ibv_port_attr",
          "active_mtu=" + activeMtu + " gid_tbl_len=" + gidTableLength);
      if (state != PORT_ACTIVE) {
        throw new VerbsException(
            VerbsException.Reason.PROVIDER_UNAVAILABLE,
            "query_port",
            device.name()
                + " port "
                + portNumber
                + " is not ACTIVE (state "
                + state
                + "): is its network interface up? ('ip link set <netdev> up')");
      }
      if (gidIndex >= gidTableLength) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT,
            "query_gid",
            "GID index " + gidIndex + " is past the table (" + gidTableLength + " entries)");
      }
      rc = Native.lib().ibv_query_gid(context, (byte) portNumber, gidIndex, attr);
      if (rc != 0) {
        throw Errors.of("query_gid", Errors.EINVAL, "GID index " + gidIndex);
      }
      for (int i = 0; i < Structs.GID_SIZE; i++) {
        gid[i] = Native.getByte(attr + i);
      }
      boolean empty = true;
      for (byte b : gid) {
        empty &= b == 0;
      }
      if (empty) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT,
            "query_gid",
            "GID index "
                + gidIndex
                + " of "
                + device.name()
                + " is empty; pick a populated RoCE v2 entry with -D"
                + DeviceOptions.GID_INDEX_PROP_NAME
                + " ('show_gids' or /sys/class/infiniband/*/ports/*/gids)");
      }
    } finally {
      Native.free(attr);
    }
  }

  /** Runs the layout probe and the window-bounds self-test, once per device per JVM. */
  void startUpChecks() {
    windowBoundsEnforced = StartUpCheck.windowBoundsEnforced(this);
  }

  /** The deepest completion queue the device allows ({@code max_cqe}). */
  int maxCqe() {
    return maxCqe;
  }

  long handle() {
    return context;
  }

  OpsTable ops() {
    return ops;
  }

  DeviceOptions options() {
    return options;
  }

  LiveChildren children() {
    return children;
  }

  int portNumber() {
    return portNumber;
  }

  int gidIndex() {
    return gidIndex;
  }

  int activeMtu() {
    return activeMtu;
  }

  byte[] gid() {
    return gid.clone();
  }

  int lid() {
    return lid;
  }

  /** Responder resources to offer at RTR: at most 16, at most what the device has. */
  int maxDestRdAtomic() {
    return Math.max(1, Math.min(16, maxQpRdAtom));
  }

  /** Outstanding READs to allow at RTS. */
  int maxRdAtomic() {
    return Math.max(1, Math.min(16, maxQpInitRdAtom));
  }

  synchronized void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "device context is closed");
    }
  }

  @Override
  public Device device() {
    return device;
  }

  @Override
  public DeviceAttributes queryDevice() {
    requireOpen("query_device");
    return new DeviceAttributes(
        maxMessageSize,
        maxQp,
        maxMr,
        maxMw,
        maxQpWr,
        maxSge,
        maxCqe,
        mwType2,
        windowBoundsEnforced,
        false);
  }

  @Override
  public ProtectionDomain allocateProtectionDomain() {
    synchronized (this) {
      requireOpen("alloc_pd");
      long pd = Native.lib().ibv_alloc_pd(context);
      if (pd == 0) {
        throw Errors.of("alloc_pd", Native.lastError(), device.name());
      }
      LayoutProbe.require(
          Native.getLong(pd + Structs.Pd.CONTEXT) == context, "ibv_pd", "pd->context");
      children.add("protection domain");
      return new IbvProtectionDomain(this, pd);
    }
  }

  @Override
  public CompletionQueue createCompletionQueue(int capacity) {
    if (capacity < 1 || capacity > maxCqe) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "create_cq",
          "capacity " + capacity + " outside 1.." + maxCqe);
    }
    synchronized (this) {
      requireOpen("create_cq");
      long cq = Native.lib().ibv_create_cq(context, capacity, 0, 0, 0);
      if (cq == 0) {
        throw Errors.of("create_cq", Native.lastError(), "capacity " + capacity);
      }
      LayoutProbe.require(
          Native.getLong(cq + Structs.Cq.CONTEXT) == context
              && Native.getInt(cq + Structs.Cq.CQE) >= capacity,
          "ibv_cq",
          "cq->context, cq->cqe");
      children.add("completion queue");
      return new IbvCompletionQueue(this, cq, capacity);
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      children.requireNone("close_device", "device context");
      int rc = Native.lib().ibv_close_device(context);
      if (rc != 0) {
        throw Errors.of("close_device", Errors.EBUSY, device.name());
      }
      closed = true;
    }
  }

  @Override
  public String toString() {
    return "ibv context " + device.name() + " port " + portNumber + " gid index " + gidIndex;
  }
}
