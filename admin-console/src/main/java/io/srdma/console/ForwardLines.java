package io.srdma.console;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The complete lines of a file, first first, a block at a time, holding one block and one line.
 * Bytes after the last newline (a line being written) are no line; the file's size is taken when it
 * is opened.
 */
final class ForwardLines implements Closeable {
  private final FileChannel channel;
  private final byte[] block;
  private final LineBuffer line;
  private final long size;
  private long pos; // the bytes before pos are read
  private int blockPos;
  private int blockEnd;

  ForwardLines(Path file, int blockBytes, int maxLineBytes) throws IOException {
    channel = FileChannel.open(file, StandardOpenOption.READ);
    block = new byte[blockBytes];
    line = new LineBuffer(maxLineBytes);
    size = channel.size();
  }

  /** The next complete line, or null at the end. */
  String next() throws IOException {
    while (true) {
      if (blockPos == blockEnd) {
        if (pos == size) {
          return null; // what is gathered has no newline yet: not part of the log
        }
        fill();
      }
      int i = blockPos;
      while (i < blockEnd && block[i] != '\n') {
        i++;
      }
      line.append(block, blockPos, i - blockPos);
      if (i == blockEnd) {
        blockPos = blockEnd;
        continue;
      }
      blockPos = i + 1;
      return line.take();
    }
  }

  private void fill() throws IOException {
    int n = (int) Math.min(block.length, size - pos);
    ByteBuffer b = ByteBuffer.wrap(block, 0, n);
    while (b.hasRemaining()) {
      if (channel.read(b, pos + b.position()) < 0) {
        throw new IOException("the audit file shrank while it was read");
      }
    }
    pos += n;
    blockPos = 0;
    blockEnd = n;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
