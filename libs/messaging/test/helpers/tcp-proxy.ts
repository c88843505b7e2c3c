import net from 'node:net';

/**
 * A TCP hop between the client and RabbitMQ, so a test can cut the network (both ways,
 * mid-connection) and refuse reconnects without touching the shared broker.
 */
export interface TcpProxy {
  url: string;
  /** Destroys every open connection and refuses new ones until `restore()`. */
  cut(): void;
  restore(): void;
  /** Connections refused since the last `cut()`: the client's reconnect attempts. */
  refused(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, user = 'guest:guest'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let refusing = false;
  let refused = 0;
  const server = net.createServer((client) => {
    if (refusing) {
      refused += 1;
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `amqp://${user}@127.0.0.1:${port}`,
    cut() {
      refusing = true;
      refused = 0;
      for (const s of sockets) s.destroy();
    },
    restore() {
      refusing = false;
    },
    refused: () => refused,
    async close() {
      refusing = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
