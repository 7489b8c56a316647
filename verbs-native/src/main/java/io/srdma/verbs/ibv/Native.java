package io.srdma.verbs.ibv;

import com.kenai.jffi.CallContext;
import com.kenai.jffi.CallingConvention;
import com.kenai.jffi.Invoker;
import com.kenai.jffi.MemoryIO;
import com.kenai.jffi.Type;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;

/**
 * The one holder of native access: libibverbs' exported functions through jnr-ffi, loaded once, and
 * raw memory plus function-pointer calls through jffi. Handles are plain {@code long} addresses
 * (LP64: a C {@code long} is a pointer wide). Nothing here is public.
 */
final class Native {
  /** The exported libibverbs functions this provider binds by name (public for jnr-ffi). */
  public interface LibIbverbs {
    long ibv_get_device_list(long numDevicesOut);

    void ibv_free_device_list(long list);

    String ibv_get_device_name(long device);

    @SaveError
    long ibv_open_device(long device);

    int ibv_close_device(long context);

    int ibv_query_device(long context, long deviceAttr);

    int ibv_query_port(long context, byte port, long portAttr);

    int ibv_query_gid(long context, byte port, int index, long gid);

    @SaveError
    long ibv_alloc_pd(long context);

    int ibv_dealloc_pd(long pd);

    @SaveError
    long ibv_reg_mr(long pd, long addr, long length, int access);

    int ibv_dereg_mr(long mr);

    @SaveError
    long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    int ibv_destroy_cq(long cq);

    /** Returns 0 or an errno value (not -1 with errno set). */
    int ibv_resize_cq(long cq, int cqe);

    @SaveError
    long ibv_create_qp(long pd, long initAttr);

    int ibv_modify_qp(long qp, long attr, int attrMask);

    int ibv_query_qp(long qp, long attr, int attrMask, long initAttr);

    int ibv_destroy_qp(long qp);

    @SaveError
    long ibv_create_srq(long pd, long srqInitAttr);

    int ibv_destroy_srq(long srq);
  }

  /**
   * {@code ibv_reg_mr_iova2} (libibverbs symbol version IBVERBS_1.8, rdma-core since 2020): bound
   * on its own so that an older libibverbs still loads (public for jnr-ffi).
   */
  public interface LibIbverbsIova {
    @SaveError
    long ibv_reg_mr_iova2(long pd, long addr, long length, long iova, int access);
  }

  /** The shared object rdma-core installs (package libibverbs1). */
  static final String LIBRARY = "ibverbs";

  /** Its soname, for systems without the development link. */
  static final String SONAME = "libibverbs.so.1";

  static final MemoryIO MEMORY = MemoryIO.getInstance();
  static final Invoker INVOKER = Invoker.getInstance();

  /** {@code int f(void *, void *, void *)}: post_send, post_recv, post_srq_recv. */
  static final CallContext PTR3_INT =
      CallContext.getCallContext(
          Type.SINT32,
          new Type[] {Type.POINTER, Type.POINTER, Type.POINTER},
          CallingConvention.DEFAULT,
          false);

  /** {@code int f(void *, int, void *)}: poll_cq. */
  static final CallContext PTR_INT_PTR_INT =
      CallContext.getCallContext(
          Type.SINT32,
          new Type[] {Type.POINTER, Type.SINT32, Type.POINTER},
          CallingConvention.DEFAULT,
          false);

  /** {@code void *f(void *, int)}: alloc_mw. */
  static final CallContext PTR_INT_PTR =
      CallContext.getCallContext(
          Type.POINTER, new Type[] {Type.POINTER, Type.SINT32}, CallingConvention.DEFAULT, true);

  /** {@code int f(void *)}: dealloc_mw. */
  static final CallContext PTR_INT =
      CallContext.getCallContext(
          Type.SINT32, new Type[] {Type.POINTER}, CallingConvention.DEFAULT, false);

  private static final Loaded LOADED = load();
  private static final LibIbverbsIova IOVA = LOADED.lib() == null ? null : loadIova();

  private Native() {}

  /** The outcome of loading the library, kept for the life of the JVM. */
  private record Loaded(LibIbverbs lib, Runtime runtime, String failure) {}

  private static Loaded load() {
    try {
      LibIbverbs lib;
      try {
        lib = LibraryLoader.create(LibIbverbs.class).failImmediately().load(LIBRARY);
      } catch (LinkageError | RuntimeException unversioned) {
        // without libibverbs-dev there is no libibverbs.so link: ask the dynamic linker for .so.1
        lib = LibraryLoader.create(LibIbverbs.class).failImmediately().load(SONAME);
      }
      return new Loaded(lib, Runtime.getRuntime(lib), null);
    } catch (LinkageError | RuntimeException e) {
      return new Loaded(
          null,
          null,
          "libibverbs.so.1 could not be loaded ("
              + e.getMessage()
              + "); install rdma-core's user-space libraries: Debian/Ubuntu 'apt-get install"
              + " libibverbs1 ibverbs-providers rdma-core', Fedora/RHEL 'dnf install"
              + " libibverbs rdma-core'");
    }
  }

  private static LibIbverbsIova loadIova() {
    for (String name : new String[] {LIBRARY, SONAME}) {
      try {
        return LibraryLoader.create(LibIbverbsIova.class).failImmediately().load(name);
      } catch (LinkageError | RuntimeException e) {
        // try the next name; null when neither exports ibv_reg_mr_iova2
      }
    }
    return null;
  }

  /** {@code ibv_reg_mr_iova2}, or null when this libibverbs does not export it. */
  static LibIbverbsIova iova() {
    return IOVA;
  }

  /** Null when libibverbs loaded, else what to install. */
  static String loadFailure() {
    return LOADED.failure();
  }

  /** The bound library; only call after {@link #loadFailure()} returned null. */
  static LibIbverbs lib() {
    if (LOADED.lib() == null) {
      throw new IllegalStateException(LOADED.failure());
    }
    return LOADED.lib();
  }

  /** errno of the last {@code @SaveError} call on this thread. */
  static int lastError() {
    return LOADED.runtime().getLastError();
  }

  /** Allocates {@code size} zeroed bytes off-heap; never 0. */
  static long allocate(long size) {
    long address = MEMORY.allocateMemory(size, true);
    if (address == 0) {
      throw new OutOfMemoryError("malloc(" + size + ") for a libibverbs structure");
    }
    return address;
  }

  static void free(long address) {
    if (address != 0) {
      MEMORY.freeMemory(address);
    }
  }

  static long getLong(long address) {
    return MEMORY.getLong(address);
  }

  static int getInt(long address) {
    return MEMORY.getInt(address);
  }

  static void putLong(long address, long value) {
    MEMORY.putLong(address, value);
  }

  static void putInt(long address, int value) {
    MEMORY.putInt(address, value);
  }

  static void putByte(long address, byte value) {
    MEMORY.putByte(address, value);
  }

  static byte getByte(long address) {
    return MEMORY.getByte(address);
  }

  static short getShort(long address) {
    return MEMORY.getShort(address);
  }

  static void putShort(long address, short value) {
    MEMORY.putShort(address, value);
  }
}
