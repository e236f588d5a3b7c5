// Module header: chat templates. chat_template renders a conversation (chat_message or JSON
// messages) into the prompt text a chat model expects, from the Jinja template the model carries
// (Python Jinja2 semantics, as Hugging Face's apply_chat_template) or the built-in ChatML.
#pragma once

#include <nexttok/chat/chat_message.hpp>
#include <nexttok/chat/chat_template.hpp>
#include <nexttok/chat/chat_template_error.hpp>
#include <nexttok/chat/encode_chat.hpp>
#include <nexttok/chat/load_chat_template.hpp>
