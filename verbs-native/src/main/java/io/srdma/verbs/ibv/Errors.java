package io.srdma.verbs.ibv;

import io.srdma.verbs.VerbsException;

/** Turns libibverbs' errno values into {@link VerbsException}s that name the verb. */
final class Errors {
  static final int EPERM = 1;
  static final int EBADF = 9;
  static final int EAGAIN = 11;
  static final int ENOMEM = 12;
  static final int EACCES = 13;
  static final int EFAULT = 14;
  static final int EBUSY = 16;
  static final int EINVAL = 22;
  static final int ENOSYS = 38;
  static final int EOPNOTSUPP = 95;

  private Errors() {}

  /** An exception for {@code verb} failing with {@code errno}; {@code what} adds context. */
  static VerbsException of(String verb, int errno, String what) {
    String message = what + " failed: " + name(errno);
    return new VerbsException(reason(errno), verb, message);
  }

  static VerbsException.Reason reason(int errno) {
    return switch (errno) {
      case EINVAL, EFAULT -> VerbsException.Reason.INVALID_ARGUMENT;
      case ENOMEM, EAGAIN -> VerbsException.Reason.RESOURCE_EXHAUSTED;
      case EBUSY -> VerbsException.Reason.BUSY;
      case EBADF -> VerbsException.Reason.CLOSED;
      case ENOSYS, EOPNOTSUPP -> VerbsException.Reason.NOT_SUPPORTED;
      case EPERM, EACCES -> VerbsException.Reason.PROVIDER_UNAVAILABLE;
      default -> VerbsException.Reason.IO;
    };
  }

  static String name(int errno) {
    String symbol =
        switch (errno) {
          case EPERM -> "EPERM";
          case EBADF -> "EBADF";
          case EAGAIN -> "EAGAIN";
          case ENOMEM -> "ENOMEM";
          case EACCES -> "EACCES";
          case EFAULT -> "EFAULT";
          case EBUSY -> "EBUSY";
          case EINVAL -> "EINVAL";
          case ENOSYS -> "ENOSYS";
          case EOPNOTSUPP -> "EOPNOTSUPP";
          default -> "errno";
        };
    return symbol + " (" + errno + ")";
  }
}
