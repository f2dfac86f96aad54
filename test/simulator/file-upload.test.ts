import { request as httpsRequest } from 'node:https';
import { request, Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { useLabPki } from '../support/lab-pki.js';
import { restartNetworking, useSimulatorApi } from './sim-client.js';

/** POST /interface/file/: six slots, file names, 1 MiB, content sniffing, Expect, pending content. */

const pki = useLabPki();
const { sim, api } = useSimulatorApi({ restartMs: 100, serviceRateLimit: false });

const file = (name: string, source = name) => ({ name, content: pki.read(source) });

describe('accepted uploads', () => {
  it('keeps each part under its file name in its slot, and answers with the names', async () => {
    const answer = await api.upload({
      wpa_ca_cert: file('ca.pem'),
      wpa_client_cert: file('client.pem'),
      wpa_private_key: file('client.key'),
      wpa_ca_cert2: file('ca.der'),
      wpa_client_cert2: file('client.pem'),
      wpa_private_key2: file('client.pfx'),
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      files: {
        wpa_ca_cert: 'ca.pem',
        wpa_client_cert: 'client.pem',
        wpa_private_key: 'client.key',
        wpa_ca_cert2: 'ca.der',
        wpa_client_cert2: 'client.pem',
        wpa_private_key2: 'client.pfx',
      },
    });
    const files = sim.state().files.map((f) => `${f.slot}:${f.name}:${f.state}:${f.kind}`);
    expect(files).toEqual([
      'wpa_ca_cert:ca.pem:pending:pem-certificate',
      'wpa_client_cert:client.pem:pending:pem-certificate',
      'wpa_private_key:client.key:pending:pem-private-key',
      'wpa_ca_cert2:ca.der:pending:der-certificate',
      'wpa_client_cert2:client.pem:pending:pem-certificate',
      'wpa_private_key2:client.pfx:pending:pfx',
    ]);
  });

  it.each([
    ['a DER key', 'client.key.der'],
    ['an encrypted PEM key', 'client-encrypted.key'],
    ['a PFX', 'client.pfx'],
    ['a legacy PFX', 'client-legacy.pfx'],
  ])('accepts %s as a private key', async (_label, source) => {
    const answer = await api.upload({ wpa_private_key: file('key.bin', source) });
    expect(answer.body).toEqual({ success: true, files: { wpa_private_key: 'key.bin' } });
  });

  it('judges by content, not by name: a certificate named .key goes into a certificate slot', async () => {
    expect((await api.upload({ wpa_ca_cert: file('looks-like.key', 'ca.pem') })).status).toBe(200);
  });

  it('puts new content into effect at the next restart only', async () => {
    await api.upload({ wpa_ca_cert: file('ca.pem') });
    await restartNetworking(sim, api);
    await api.upload({ wpa_ca_cert: file('ca.pem', 'rogue-ca.pem') });
    const before = sim.state().files;
    expect(before.map((f) => f.state)).toEqual(['active', 'pending']);
    expect(before[0]?.sha256).not.toBe(before[1]?.sha256);
    await restartNetworking(sim, api);
    const after = sim.state().files;
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ state: 'active', sha256: before[1]?.sha256 });
  });
});

describe('refused uploads', () => {
  it.each([
    [
      'a key in a certificate slot',
      'wpa_ca_cert',
      'ca.key',
      'ca.key',
      400,
      'Part "wpa_ca_cert" must be a certificate (PEM or DER); "ca.key" is not one.',
    ],
    [
      'a certificate in a key slot',
      'wpa_private_key',
      'client.pem',
      'client.pem',
      400,
      'Part "wpa_private_key" must be a private key (PEM, DER or PFX); "client.pem" is not one.',
    ],
    [
      'a PFX in a certificate slot',
      'wpa_client_cert2',
      'client.pfx',
      'client.pfx',
      400,
      'Part "wpa_client_cert2" must be a certificate (PEM or DER); "client.pfx" is not one.',
    ],
    [
      'a file name with a slash',
      'wpa_ca_cert',
      '../ca.pem',
      'ca.pem',
      400,
      'Part "wpa_ca_cert" has file name "../ca.pem"; a file name is 1 to 128 characters of A-Z, a-z, 0-9, ".", "_" and "-".',
    ],
    [
      'a file name with a space',
      'wpa_ca_cert',
      'my ca.pem',
      'ca.pem',
      400,
      'Part "wpa_ca_cert" has file name "my ca.pem"; a file name is 1 to 128 characters of A-Z, a-z, 0-9, ".", "_" and "-".',
    ],
    [
      'a file name of 129 characters',
      'wpa_ca_cert',
      `${'a'.repeat(125)}.pem`,
      'ca.pem',
      400,
      `Part "wpa_ca_cert" has file name "${'a'.repeat(125)}.pem"; a file name is 1 to 128 characters of A-Z, a-z, 0-9, ".", "_" and "-".`,
    ],
    [
      'the file name ".."',
      'wpa_ca_cert',
      '..',
      'ca.pem',
      400,
      'Part "wpa_ca_cert" has file name ".."; a file name is 1 to 128 characters of A-Z, a-z, 0-9, ".", "_" and "-".',
    ],
    [
      'an unknown part',
      'wpa_ca',
      'ca.pem',
      'ca.pem',
      400,
      'Unknown part "wpa_ca"; the parts are wpa_ca_cert, wpa_client_cert, wpa_private_key, wpa_ca_cert2, wpa_client_cert2, wpa_private_key2.',
    ],
  ])('refuses %s', async (_label, part, name, source, status, sentence) => {
    const answer = await api.upload({ [part]: file(name, source) });
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ success: false, error: sentence });
    expect(sim.state().files).toEqual([]);
  });

  it('accepts a file name of exactly 128 characters', async () => {
    expect((await api.upload({ wpa_ca_cert: file(`${'a'.repeat(124)}.pem`, 'ca.pem') })).status).toBe(200);
  });

  it('refuses a part over 1 MiB with 413', async () => {
    const pem = pki.read('ca.pem').toString();
    const big = pem + '\n'.repeat(1024 * 1024);
    const answer = await api.upload({ wpa_ca_cert: { name: 'big.pem', content: big } });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ success: false, error: 'Part "wpa_ca_cert" is larger than 1 MiB.' });
  });

  it('refuses a whole body over its cap with 413', async () => {
    const agent = new Agent({ connect: { ca: sim.certificatePem } });
    try {
      const res = await request(`${sim.apiUrl}/interface/file/`, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          authorization: `Basic ${Buffer.from(`${sim.username}:${sim.password}`).toString('base64')}`,
          'content-type': 'multipart/form-data; boundary=xyz',
        },
        body: Buffer.alloc(8 * 1024 * 1024, 0x41),
      });
      expect(res.statusCode).toBe(413);
      expect(await res.body.json()).toEqual({ success: false, error: 'Request body is too large.' });
    } finally {
      await agent.close();
    }
  });

  it('stores nothing when one part of several is refused', async () => {
    const answer = await api.upload({ wpa_ca_cert: file('ca.pem'), wpa_private_key: file('client.pem') });
    expect(answer.status).toBe(400);
    expect(sim.state().files).toEqual([]);
  });

  it('refuses a part that is not a file', async () => {
    const { FormData } = await import('undici');
    const form = new FormData();
    form.append('wpa_ca_cert', 'just text');
    const answer = await api.call('POST', '/interface/file/', form);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      error: 'Part "wpa_ca_cert" must be a file upload with a file name.',
    });
  });

  it('refuses a part given twice', async () => {
    const { FormData } = await import('undici');
    const form = new FormData();
    form.append('wpa_ca_cert', new Blob([pki.read('ca.pem')]), 'a.pem');
    form.append('wpa_ca_cert', new Blob([pki.read('ca.pem')]), 'b.pem');
    const answer = await api.call('POST', '/interface/file/', form);
    expect(answer.body).toEqual({ success: false, error: 'Part "wpa_ca_cert" is given twice.' });
  });

  it('refuses a request without file parts', async () => {
    const answer = await api.upload({});
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      error:
        'Request has no file part; send one or more of wpa_ca_cert, wpa_client_cert, wpa_private_key, wpa_ca_cert2, wpa_client_cert2, wpa_private_key2.',
    });
  });

  it('refuses a body that is not multipart', async () => {
    const answer = await api.post('/interface/file/', { wpa_ca_cert: 'ca.pem' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe(
      'Request body must be multipart/form-data with file parts named wpa_ca_cert, wpa_client_cert, wpa_private_key, wpa_ca_cert2, wpa_client_cert2, wpa_private_key2.',
    );
  });
});

/** node:https, because undici refuses to send an Expect header at all. */
function postWithExpect(
  expectation: string,
  body: Buffer,
  sendBody: 'on-continue' | 'at-once' = 'on-continue',
): Promise<{ status: number; body: unknown }> {
  const boundary = 'simboundary';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="wpa_ca_cert"; filename="ca.pem"\r\n\r\n`),
    body,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${sim.apiUrl}/interface/file/`,
      {
        method: 'POST',
        ca: sim.certificatePem,
        auth: `${sim.username}:${sim.password}`,
        headers: {
          expect: expectation,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': payload.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    req.on('error', reject);
    // Like a client that waits for 100 Continue: the body goes only if the device asks for it.
    if (sendBody === 'on-continue') req.on('continue', () => req.end(payload));
    else req.end(payload);
  });
}

describe('Expect', () => {
  it('answers 417 to Expect: 100-continue on the upload endpoint', async () => {
    const answer = await postWithExpect('100-continue', pki.read('ca.pem'));
    expect(answer.status).toBe(417);
    expect(answer.body).toEqual({
      success: false,
      error:
        'Expect: 100-continue is not supported by POST /interface/file/; send the request without it (curl -H "Expect:").',
    });
    expect(sim.state().files).toEqual([]);
  });

  it('answers 417 to any other expectation', async () => {
    const answer = await postWithExpect('something-else', pki.read('ca.pem'));
    expect(answer.status).toBe(417);
    expect(answer.body).toEqual({ success: false, error: 'Expect: something-else is not supported.' });
    expect(sim.state().files).toEqual([]);
  });

  it('accepts an empty Expect header, as the documented call sends it', async () => {
    const answer = await postWithExpect('', pki.read('ca.pem'), 'at-once');
    expect(answer).toEqual({ status: 200, body: { success: true, files: { wpa_ca_cert: 'ca.pem' } } });
  });

  it('accepts the upload without the header, as the documented curl call sends it', async () => {
    expect((await api.upload({ wpa_ca_cert: file('ca.pem') })).status).toBe(200);
  });
});
