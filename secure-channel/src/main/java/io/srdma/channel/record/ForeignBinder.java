package io.srdma.channel.record;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.util.Optional;

/**
 * Binds functions of one native library as Java 22+ foreign-function downcalls ({@code
 * java.lang.foreign}, {@code Linker.Option.critical}), for {@link GcryptDowncalls} and {@link
 * OpensslDowncalls}. This module is compiled for Java 17, so {@code Linker}, {@code SymbolLookup}
 * and the layouts are found by name; the handles it returns are of primitive types only ({@code
 * int} or {@code long} arguments, an {@code int} result), which a Java 17 class calls with {@code
 * invokeExact}.
 *
 * <p>Critical calls run without a thread-state transition and hold their thread from a safepoint
 * until they return: bind only calls that are short, never block and never call back.
 *
 * <p>Used from one static initialiser at a time; not thread-safe.
 */
final class ForeignBinder {
  /**
   * Records from this size up go through jnr-ffi, not downcalls: a critical downcall holds its
   * thread from a safepoint until it returns (the JVM's other threads wait for it to stop for a
   * collection), so only calls of a few microseconds are made so (16 KiB: ~4 µs at 4 GB/s).
   */
  static final int CRITICAL_MAX = 16 * 1024;

  private final String library;
  private final Object linker;
  private final Object lookup;
  private final Class<?> linkerClass;
  private final Class<?> lookupClass;
  private final Class<?> layoutClass;
  private final Class<?> descriptorClass;
  private final Class<?> segmentClass;
  private final Object javaLong;
  private final Object javaInt;
  private final Object options;

  /**
   * The first of {@code names} that the system's dynamic loader opens, tried in their order (a name
   * without {@code .so} is mapped by {@link System#mapLibraryName}, as jnr-ffi does), so the
   * library found is the one jnr-ffi loaded from the same names: the same mapping.
   *
   * @throws ReflectiveOperationException when there is no foreign-function API or none of {@code
   *     names} opens (the last name's failure)
   */
  ForeignBinder(String... names) throws ReflectiveOperationException {
    linkerClass = Class.forName("java.lang.foreign.Linker");
    lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
    layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
    descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
    segmentClass = Class.forName("java.lang.foreign.MemorySegment");
    Class<?> arena = Class.forName("java.lang.foreign.Arena");
    Class<?> values = Class.forName("java.lang.foreign.ValueLayout");
    Class<?> option = Class.forName("java.lang.foreign.Linker$Option");
    linker = linkerClass.getMethod("nativeLinker").invoke(null);
    Object found = null;
    String foundName = null;
    InvocationTargetException last = null;
    for (String name : names) {
      String file = name.contains(".so") ? name : System.mapLibraryName(name);
      try {
        found =
            lookupClass
                .getMethod("libraryLookup", String.class, arena)
                .invoke(null, file, arena.getMethod("global").invoke(null));
        foundName = file;
        break;
      } catch (InvocationTargetException e) {
        last = e; // IllegalArgumentException: no such library
      }
    }
    if (found == null) {
      throw last != null ? last : new ClassNotFoundException("no library names given");
    }
    library = foundName;
    lookup = found;
    javaLong = values.getField("JAVA_LONG").get(null);
    javaInt = values.getField("JAVA_INT").get(null);
    options = Array.newInstance(option, 1);
    Array.set(options, 0, option.getMethod("critical", boolean.class).invoke(null, false));
  }

  /**
   * Why downcalls are not to be bound here: the Java version has no foreign-function API (before
   * 22), or {@code -Dproperty=jnr} asks for jnr-ffi; null when they may be.
   */
  static String notTried(String property) {
    int feature = Runtime.version().feature();
    if (feature < 22) {
      return "Java " + feature + " has no foreign-function API (22+)";
    }
    return "jnr".equals(System.getProperty(property)) ? "-D" + property + "=jnr" : null;
  }

  /** What a failed binding says: the reflective call's own cause where there is one. */
  static String failed(Throwable e) {
    Throwable cause = e instanceof InvocationTargetException i ? i.getCause() : e;
    return "binding the downcalls failed: " + cause;
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

  /**
   * {@code int symbol(arguments...)}, each argument {@code int.class} (a C {@code int}) or {@code
   * long.class} (an address, a size, a handle: LP64), as a critical downcall.
   *
   * @throws NoSuchMethodException when the library has no {@code symbol}
   * @throws IllegalArgumentException for an argument type other than int or long
   */
  MethodHandle bind(String symbol, Class<?>... arguments) throws ReflectiveOperationException {
    Optional<?> address =
        (Optional<?>) lookupClass.getMethod("find", String.class).invoke(lookup, symbol);
    if (address.isEmpty()) {
      throw new NoSuchMethodException(library + " has no " + symbol);
    }
    Object layouts = Array.newInstance(layoutClass, arguments.length);
    for (int i = 0; i < arguments.length; i++) {
      if (arguments[i] != int.class && arguments[i] != long.class) {
        throw new IllegalArgumentException(symbol + ": argument " + i + " is " + arguments[i]);
      }
      Array.set(layouts, i, arguments[i] == int.class ? javaInt : javaLong);
    }
    Object descriptor =
        descriptorClass
            .getMethod("of", layoutClass, layouts.getClass())
            .invoke(null, javaInt, layouts);
    return (MethodHandle)
        linkerClass
            .getMethod("downcallHandle", segmentClass, descriptorClass, options.getClass())
            .invoke(linker, address.get(), descriptor, options);
  }
}
