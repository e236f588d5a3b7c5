// The official OpenAI client for Node against nexttok's server:
//   node openai_client_test.mjs BASE_URL NODE_PREFIX [EXPECTED_TEXT]
// BASE_URL is the server's (http://127.0.0.1:PORT), NODE_PREFIX the directory install.sh installed
// the `openai` package into, EXPECTED_TEXT the model's greedy text of "Once upon a time" (stories260K).
// Runs a chat completion, the same chat completion streamed (the same seed, temperature and
// max_tokens: the same text, finish reason and token count), a completion (the known greedy text),
// the same completion streamed, and the model list. Exits 1 with a message at the first mismatch.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [baseURL, prefix, expectedFile] = process.argv.slice(2);
if (!baseURL || !prefix) {
  console.error('usage: node openai_client_test.mjs BASE_URL NODE_PREFIX [EXPECTED_TEXT]');
  process.exit(2);
}
// The package lives in the build tree, not next to this file: resolve it from there.
const require = createRequire(path.join(path.resolve(prefix), 'package.json'));
const openai = require('openai');
const OpenAI = openai.default ?? openai;
console.log(`openai ${JSON.parse(readFileSync(path.join(path.dirname(require.resolve("openai")), "package.json"), "utf8")).version} (Node ${process.version}) against ${baseURL}`);

function check(condition, message) {
  if (!condition) {
    console.error(`FAIL: ${message}`);
    process.exit(1);
  }
}

const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });

const models = await client.models.list();
check(models.data.length >= 1 && typeof models.data[0].id === 'string', `models.list: ${JSON.stringify(models.data)}`);
const model = models.data[0].id;
console.log(`model: ${model}`);

// Chat: non-streamed, then streamed with the same sampling.
const chatParams = {
  model,
  messages: [
    { role: 'system', content: 'You tell short stories.' },
    { role: 'user', content: 'Tell me a story about a cat.' },
  ],
  max_tokens: 40,
  temperature: 0.8,
  top_p: 0.95,
  seed: 42,
};
const chat = await client.chat.completions.create(chatParams);
check(chat.object === 'chat.completion', `chat: object is ${chat.object}`);
check(chat.choices.length === 1, `chat: ${chat.choices.length} choices`);
const answer = chat.choices[0];
check(answer.message.role === 'assistant', `chat: role ${answer.message.role}`);
check(typeof answer.message.content === 'string', `chat: content ${answer.message.content}`);
check(['stop', 'length'].includes(answer.finish_reason), `chat: finish_reason ${answer.finish_reason}`);
check(chat.usage.completion_tokens >= 1 && chat.usage.completion_tokens <= 40,
      `chat: usage.completion_tokens ${chat.usage.completion_tokens}`);
check(chat.usage.total_tokens === chat.usage.prompt_tokens + chat.usage.completion_tokens, `chat: usage ${JSON.stringify(chat.usage)}`);
console.log(`chat (${chat.usage.completion_tokens} tokens, ${answer.finish_reason}): ${JSON.stringify(answer.message.content)}`);

const stream = await client.chat.completions.create({ ...chatParams, stream: true, stream_options: { include_usage: true } });
let streamed = '';
let streamedFinish = null;
let streamedUsage = null;
let chunks = 0;
for await (const chunk of stream) {
  ++chunks;
  check(chunk.object === 'chat.completion.chunk', `chat stream: object is ${chunk.object}`);
  for (const choice of chunk.choices) {
    streamed += choice.delta?.content ?? '';
    if (choice.finish_reason) streamedFinish = choice.finish_reason;
  }
  if (chunk.usage) streamedUsage = chunk.usage;
}
console.log(`chat streamed (${chunks} chunks, ${streamedFinish}): ${JSON.stringify(streamed)}`);
check(streamed === answer.message.content,
      `the streamed chat text ${JSON.stringify(streamed)} differs from the non-streamed ${JSON.stringify(answer.message.content)}`);
check(streamedFinish === answer.finish_reason, `chat stream: finish_reason ${streamedFinish}, non-streamed ${answer.finish_reason}`);
check(streamedUsage && streamedUsage.completion_tokens === chat.usage.completion_tokens,
      `chat stream: usage ${JSON.stringify(streamedUsage)}, non-streamed ${JSON.stringify(chat.usage)}`);

// Completion: greedy, so the text is known.
const completionParams = { model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0 };
const completion = await client.completions.create(completionParams);
check(completion.object === 'text_completion', `completion: object is ${completion.object}`);
const text = completion.choices[0].text;
console.log(`completion (${completion.usage.completion_tokens} tokens, ${completion.choices[0].finish_reason}): ${JSON.stringify(text)}`);
check(completion.usage.completion_tokens === 24, `completion: usage.completion_tokens ${completion.usage.completion_tokens}`);
check(completion.choices[0].finish_reason === 'length', `completion: finish_reason ${completion.choices[0].finish_reason}`);
if (expectedFile) {
  const expected = readFileSync(expectedFile, 'utf8').trim();
  check(text.length > 0 && expected.startsWith(`Once upon a time${text}`),
        `completion: ${JSON.stringify(text)} is not how the greedy text ${JSON.stringify(expected)} goes on`);
}
const completionStream = await client.completions.create({ ...completionParams, stream: true });
let completionStreamed = '';
for await (const chunk of completionStream) for (const choice of chunk.choices) completionStreamed += choice.text ?? '';
check(completionStreamed === text, `the streamed completion ${JSON.stringify(completionStreamed)} differs from ${JSON.stringify(text)}`);

console.log('PASS');
