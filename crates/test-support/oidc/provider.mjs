// A real OpenID provider for the login tests: oidc-provider (installed by
// .ci/install-oidc-provider) on 127.0.0.1, with one confidential client and its
// development login and consent pages (any login name signs in as that subject).
//
//   node provider.mjs --modules <dir holding node_modules/oidc-provider> \
//     --client-id ID --client-secret SECRET --redirect-uri URI [--redirect-uri URI…] [--port N]
//
// Prints the issuer URL (`http://127.0.0.1:PORT`) on stdout once it listens; port 0 or
// none picks a free one. The client authenticates with HTTP Basic and must use PKCE.
// Accounts have `name` (the login name) and `email` (`<login>@example.test`, verified).
// Runs until killed.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// Stdout carries the issuer line only: the provider's own notices go to stderr (the test
// stops reading stdout once it has the issuer).
console.log = console.error;
console.info = console.error;

const { values } = parseArgs({
  options: {
    modules: { type: 'string' },
    port: { type: 'string', default: '0' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    // Every server the client's logins may come back to (one per team server node).
    'redirect-uri': { type: 'string', multiple: true },
  },
});
for (const name of ['modules', 'client-id', 'client-secret', 'redirect-uri']) {
  if (!values[name]?.length) {
    console.error(`provider.mjs: --${name} is required`);
    process.exit(2);
  }
}

const entry = join(values.modules, 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider } = await import(pathToFileURL(entry).href);

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(values.port), '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: values['client-id'],
      client_secret: values['client-secret'],
      redirect_uris: values['redirect-uri'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  pkce: { required: () => true },
  // The ID token carries the profile and e-mail claims itself (no userinfo call needed).
  conformIdTokenClaims: false,
  claims: {
    openid: ['sub'],
    profile: ['name'],
    email: ['email', 'email_verified'],
  },
  cookies: { keys: ['hearth test provider cookie key'] },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        return { sub: id, name: id, email: `${id}@example.test`, email_verified: true };
      },
    };
  },
});
server.on('request', provider.callback());

process.stdout.write(`${issuer}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
