package io.srdma.verbs.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Binds short C functions as Java 22+ foreign-function downcalls with {@code
 * Linker.Option.critical(false)}: a critical call makes no thread-state transition, where a JNI
 * stub (jffi, jnr-ffi) takes one each way, but it also keeps its thread from a safepoint until it
 * returns, so only functions that take a few microseconds, never block and never call back into
 * Java may be bound here.
 *
 * <p>Every argument is a C pointer, size or handle passed as a {@code long} (LP64) or a C {@code
 * int} passed as an {@code int}; the result an {@code int} or a {@code long}. So each handle is of
 * a primitive type that code compiled for Java 17 calls with {@code invokeExact}; the {@code
 * java.lang.foreign} API itself is reached by reflection, once, when this class first binds. Hold
 * the handles in finals: binding is slow, calling is not.
 *
 * <p>A binder is refused, and {@link #unavailable()} says why, on Java 21 or older, when the system
 * property it was made for is {@code jnr} (comparisons, or an escape hatch), or when the linker
 * cannot be found; callers then keep their JNI binding and say so (never silently).
 *
 * <p>Immutable and thread-safe; so are the handles it returns.
 */
public final class CriticalDowncalls {
  /** The property value that turns the downcalls off. */
  public static final String OFF = "jnr";

  private final String unavailable;

  private CriticalDowncalls(String unavailable) {
    this.unavailable = unavailable;
  }

  /**
   * A binder unless {@code -D<property>=jnr}, Java is older than 22 or the linker is missing.
   *
   * @param property the system property that can turn these downcalls off, e.g. {@code
   *     srdma.ibv.calls}
   */
  public static CriticalDowncalls unlessTurnedOff(String property) {
    int feature = Runtime.version().feature();
    if (feature < 22) {
      return new CriticalDowncalls("Java " + feature + " has no foreign-function API (22+)");
    }
    if (OFF.equals(System.getProperty(property))) {
      return new CriticalDowncalls("-D" + property + "=" + OFF);
    }
    String failure = Linking.FAILURE;
    return new CriticalDowncalls(
        failure == null ? null : "the foreign-function linker could not be found: " + failure);
  }

  /** True when {@link #bind} can be called. */
  public boolean available() {
    return unavailable == null;
  }

  /**
   * Why this binder is refused (Java version, the property, the linker), or null when it is not.
   */
  public String unavailable() {
    return unavailable;
  }

  /**
   * The C function at {@code functionAddress} (a function pointer, e.g. read from an ops table) as
   * a critical downcall of type {@code (arguments) result}.
   *
   * @param result {@code int.class} or {@code long.class}
   * @param arguments each {@code long.class} (pointer, size, handle) or {@code int.class}
   * @throws IllegalStateException when {@link #available()} is false
   * @throws IllegalArgumentException naming the function when the address is 0, a type is not
   *     {@code int}/{@code long} or the linker refuses
   */
  public MethodHandle bind(long functionAddress, Class<?> result, Class<?>... arguments) {
    requireAvailable();
    String what = "the function at 0x" + Long.toHexString(functionAddress);
    if (functionAddress == 0) {
      throw new IllegalArgumentException("cannot bind a NULL function pointer");
    }
    Linking linking = Linking.INSTANCE;
    try {
      return linking.downcall(linking.ofAddress(functionAddress), result, arguments);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      throw failed(what, e);
    }
  }

  /**
   * {@code symbol} of the first of {@code libraries} that the dynamic linker loads (several names
   * for one library, e.g. its soname then {@link System#mapLibraryName}), as a critical downcall of
   * type {@code (arguments) result}. A library stays loaded for the life of the JVM.
   *
   * @throws IllegalStateException when {@link #available()} is false
   * @throws IllegalArgumentException naming the library and symbol when none of the names loads,
   *     the library has no such symbol, a type is not {@code int}/{@code long} or the linker
   *     refuses
   */
  public MethodHandle bind(
      List<String> libraries, String symbol, Class<?> result, Class<?>... arguments) {
    requireAvailable();
    Linking linking = Linking.INSTANCE;
    Object lookup = null;
    String library = null;
    Throwable last = null;
    for (String name : libraries) {
      try {
        lookup = linking.library(name);
        library = name;
        break;
      } catch (ReflectiveOperationException | RuntimeException e) {
        last = e; // IllegalArgumentException: no such library; try the next name
      }
    }
    if (lookup == null) {
      throw new IllegalArgumentException(
          "binding " + symbol + " failed: none of " + libraries + " loads (" + last + ")", last);
    }
    String what = symbol + " of " + library;
    try {
      Optional<?> address = linking.find(lookup, symbol);
      if (address.isEmpty()) {
        throw new IllegalArgumentException(library + " has no symbol " + symbol);
      }
      return linking.downcall(address.get(), result, arguments);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      throw failed(what, e);
    }
  }

  private void requireAvailable() {
    if (unavailable != null) {
      throw new IllegalStateException("no downcalls: " + unavailable);
    }
  }

  private static IllegalArgumentException failed(String what, Throwable e) {
    Throwable cause = e instanceof InvocationTargetException i ? i.getCause() : e;
    String why =
        cause instanceof IllegalArgumentException && cause.getMessage() != null
            ? cause.getMessage()
            : String.valueOf(cause);
    return new IllegalArgumentException("binding " + what + " failed: " + why, cause);
  }

  /** The foreign-function API found by name (this module is compiled for Java 17). */
  private static final class Linking {
    static final String FAILURE;
    static final Linking INSTANCE;

    static {
      Linking linking = null;
      String failure = null;
      try {
        linking = new Linking();
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        failure = String.valueOf(e instanceof InvocationTargetException i ? i.getCause() : e);
      }
      INSTANCE = linking;
      FAILURE = failure;
    }

    private final Object linker;
    private final Object javaLong;
    private final Object javaInt;
    private final Object options;
    private final Object globalArena;
    private final Class<?> layoutClass;
    private final Method ofAddress;
    private final Method libraryLookup;
    private final Method find;
    private final Method descriptorOf;
    private final Method downcallHandle;
    private final Map<String, Object> libraries = new ConcurrentHashMap<>();

    private Linking() throws ReflectiveOperationException {
      Class<?> linkerClass = Class.forName("java.lang.foreign.Linker");
      Class<?> lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
      Class<?> descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
      Class<?> segmentClass = Class.forName("java.lang.foreign.MemorySegment");
      Class<?> arena = Class.forName("java.lang.foreign.Arena");
      Class<?> values = Class.forName("java.lang.foreign.ValueLayout");
      Class<?> option = Class.forName("java.lang.foreign.Linker$Option");
      layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
      linker = linkerClass.getMethod("nativeLinker").invoke(null);
      javaLong = values.getField("JAVA_LONG").get(null);
      javaInt = values.getField("JAVA_INT").get(null);
      options = Array.newInstance(option, 1);
      Array.set(options, 0, option.getMethod("critical", boolean.class).invoke(null, false));
      globalArena = arena.getMethod("global").invoke(null);
      ofAddress = segmentClass.getMethod("ofAddress", long.class);
      libraryLookup = lookupClass.getMethod("libraryLookup", String.class, arena);
      find = lookupClass.getMethod("find", String.class);
      descriptorOf =
          descriptorClass.getMethod(
              "of", layoutClass, Array.newInstance(layoutClass, 0).getClass());
      downcallHandle =
          linkerClass.getMethod(
              "downcallHandle", segmentClass, descriptorClass, options.getClass());
    }

    Object ofAddress(long address) throws ReflectiveOperationException {
      return ofAddress.invoke(null, address);
    }

    Object library(String name) throws ReflectiveOperationException {
      Object lookup = libraries.get(name);
      if (lookup == null) {
        try {
          lookup = libraryLookup.invoke(null, name, globalArena);
        } catch (InvocationTargetException e) {
          if (e.getCause() instanceof RuntimeException r) {
            throw r; // IllegalArgumentException: no such library
          }
          throw e;
        }
        Object raced = libraries.putIfAbsent(name, lookup);
        lookup = raced == null ? lookup : raced;
      }
      return lookup;
    }

    Optional<?> find(Object lookup, String symbol) throws ReflectiveOperationException {
      return (Optional<?>) find.invoke(lookup, symbol);
    }

    MethodHandle downcall(Object address, Class<?> result, Class<?>... arguments)
        throws ReflectiveOperationException {
      Object layouts = Array.newInstance(layoutClass, arguments.length);
      for (int i = 0; i < arguments.length; i++) {
        Array.set(layouts, i, layout(arguments[i]));
      }
      Object descriptor = descriptorOf.invoke(null, layout(result), layouts);
      MethodHandle handle =
          (MethodHandle) downcallHandle.invoke(linker, address, descriptor, options);
      MethodType expected = MethodType.methodType(result, arguments);
      if (!handle.type().equals(expected)) {
        throw new IllegalArgumentException(
            "the linker made " + handle.type() + ", not " + expected);
      }
      return handle;
    }

    private Object layout(Class<?> type) {
      if (type == long.class) {
        return javaLong;
      }
      if (type == int.class) {
        return javaInt;
      }
      throw new IllegalArgumentException(
          "cannot bind a " + type + ": downcalls here take and return only int and long");
    }
  }
}
