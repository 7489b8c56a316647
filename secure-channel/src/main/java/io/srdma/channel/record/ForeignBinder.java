package io.srdma.channel.record;

import io.srdma.verbs.internal.CriticalDowncalls;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

/**
 * One native library's per-record functions as critical foreign-function downcalls (Java 22+, or
 * Java 17 started with {@code --add-modules jdk.incubator.foreign
 * --enable-native-access=ALL-UNNAMED}), for {@link GcryptDowncalls}, {@link OpensslDowncalls} and
 * {@link IpsecMbDowncalls}: verbs-native's {@link CriticalDowncalls} (the project's one reflective
 * binder; this module is compiled for Java 17) with the library named as jnr-ffi names it, every
 * function returning a C {@code int} (or nothing), and the record layer's {@link #CRITICAL_MAX}.
 *
 * <p>Critical calls run without a thread-state transition and hold their thread from a safepoint
 * until they return: bind only calls that are short, never block and never call back.
 *
 * <p>Immutable and thread-safe.
 */
final class ForeignBinder {
  /**
   * Records from this size up go through jnr-ffi, not downcalls: a critical downcall holds its
   * thread from a safepoint until it returns (the JVM's other threads wait for it to stop for a
   * collection), so only calls of a few microseconds are made so (16 KiB: ~4 µs at 4 GB/s).
   */
  static final int CRITICAL_MAX = 16 * 1024;

  private final CriticalDowncalls downcalls;
  private final List<String> libraries;

  /**
   * @param property the system property whose value {@code jnr} keeps these calls on jnr-ffi
   * @param names the library's names in the order jnr-ffi tries them (a name without {@code .so} is
   *     mapped by {@link System#mapLibraryName}, as jnr-ffi does), so the library found is the one
   *     jnr-ffi loaded from the same names
   */
  ForeignBinder(String property, String... names) {
    this.downcalls = CriticalDowncalls.unlessTurnedOff(property);
    List<String> files = new ArrayList<>(names.length);
    for (String name : names) {
      files.add(name.contains(".so") ? name : System.mapLibraryName(name));
    }
    this.libraries = List.copyOf(files);
  }

  /** True when this JVM can make downcalls at all ({@link CriticalDowncalls#possibleHere()}). */
  static boolean possibleHere() {
    return CriticalDowncalls.possibleHere();
  }

  /** What this JVM's downcalls are called ({@link CriticalDowncalls#kind()}), or null. */
  static String kind() {
    return CriticalDowncalls.kind();
  }

  /**
   * Why no downcalls are bound here: the JVM offers none (Java 18-21, Java 17 without the options),
   * {@code -Dproperty=jnr}, or no linker; null when {@link #bind} may be called.
   */
  String unavailable() {
    return downcalls.unavailable();
  }

  /**
   * {@code int symbol(arguments...)}, each argument {@code int.class} (a C {@code int}) or {@code
   * long.class} (an address, a size, a handle: LP64), as a critical downcall.
   *
   * @throws IllegalArgumentException naming the library and the symbol when none of the names
   *     loads, the library has no {@code symbol}, or an argument is of another type
   * @throws IllegalStateException when {@link #unavailable()} is not null
   */
  MethodHandle bind(String symbol, Class<?>... arguments) {
    return downcalls.bind(libraries, symbol, int.class, arguments);
  }

  /** As {@link #bind}, for a function returning {@code void}. */
  MethodHandle bindVoid(String symbol, Class<?>... arguments) {
    return downcalls.bind(libraries, symbol, void.class, arguments);
  }

  /** What a failed binding says. */
  static String failed(Throwable e) {
    return e instanceof IllegalArgumentException && e.getMessage() != null
        ? e.getMessage()
        : "binding the downcalls failed: " + e;
  }

  /**
   * What a downcall's {@code invokeExact} threw, to throw on: an unchecked one as it is, else (the
   * declared {@code Throwable} only) an {@link AeadException} naming {@code library}.
   */
  static RuntimeException callFailed(String library, Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new AeadException(library + ": a downcall failed: " + t);
  }
}
