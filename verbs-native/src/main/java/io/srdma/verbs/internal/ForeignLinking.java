package io.srdma.verbs.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Java 22+'s {@code java.lang.foreign}, found by name: downcalls with {@code
 * Linker.Option.critical(false)}, libraries looked up in the global arena. Thread-safe.
 */
final class ForeignLinking implements Linking {
  private final Object linker;
  private final Object javaLong;
  private final Object javaInt;
  private final Object options;
  private final Object globalArena;
  private final Class<?> layoutClass;
  private final Method ofAddress;
  private final Method address;
  private final Method libraryLookup;
  private final Method find;
  private final Method descriptorOf;
  private final Method descriptorOfVoid;
  private final Method downcallHandle;
  private final Map<String, Object> libraries = new ConcurrentHashMap<>();

  ForeignLinking() throws ReflectiveOperationException {
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
    address = segmentClass.getMethod("address");
    libraryLookup = lookupClass.getMethod("libraryLookup", String.class, arena);
    find = lookupClass.getMethod("find", String.class);
    descriptorOf =
        descriptorClass.getMethod("of", layoutClass, Array.newInstance(layoutClass, 0).getClass());
    descriptorOfVoid =
        descriptorClass.getMethod("ofVoid", Array.newInstance(layoutClass, 0).getClass());
    downcallHandle =
        linkerClass.getMethod("downcallHandle", segmentClass, descriptorClass, options.getClass());
  }

  @Override
  public String kind() {
    return "FFM downcalls";
  }

  @Override
  public Object library(String name) throws ReflectiveOperationException {
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

  @Override
  public long symbol(Object library, String symbol) throws ReflectiveOperationException {
    Optional<?> found = (Optional<?>) find.invoke(library, symbol);
    return found.isEmpty() ? 0 : (long) address.invoke(found.get());
  }

  @Override
  public MethodHandle downcall(long functionAddress, Class<?> result, Class<?>... arguments)
      throws ReflectiveOperationException {
    Object layouts = Array.newInstance(layoutClass, arguments.length);
    for (int i = 0; i < arguments.length; i++) {
      Array.set(layouts, i, layout(arguments[i]));
    }
    Object descriptor =
        result == void.class
            ? descriptorOfVoid.invoke(null, layouts)
            : descriptorOf.invoke(null, layout(result), layouts);
    Object target = ofAddress.invoke(null, functionAddress);
    MethodHandle handle = (MethodHandle) downcallHandle.invoke(linker, target, descriptor, options);
    return checked(handle, MethodType.methodType(result, arguments));
  }

  /** {@code handle} when it is of the {@code expected} type, else refused. */
  static MethodHandle checked(MethodHandle handle, MethodType expected) {
    if (!handle.type().equals(expected)) {
      throw new IllegalArgumentException("the linker made " + handle.type() + ", not " + expected);
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
    throw ForeignLinking.notIntOrLong(type);
  }

  static IllegalArgumentException notIntOrLong(Class<?> type) {
    return new IllegalArgumentException(
        "cannot bind a "
            + type
            + ": downcalls here take only int and long, and return those or void");
  }
}
