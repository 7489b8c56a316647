package io.srdma.verbs.internal;

import java.util.Locale;
import jnr.ffi.LibraryLoader;

/**
 * Binds an interface to the C library where its structure layouts are the ones callers assume:
 * 64-bit Linux. Thread-safe.
 */
public final class LinuxLibC {
  private LinuxLibC() {}

  /**
   * {@code functions} bound to libc, or null off 64-bit Linux or when libc cannot be bound (the
   * caller reports what it then cannot do).
   */
  public static <T> T bind(Class<T> functions) {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    if (!os.startsWith("linux") || !"64".equals(System.getProperty("sun.arch.data.model"))) {
      return null;
    }
    try {
      return LibraryLoader.create(functions).failImmediately().load("c");
    } catch (LinkageError | RuntimeException e) {
      return null;
    }
  }
}
