// The server's endpoints on a cpp-httplib server:
//   POST /v1/completions, POST /v1/chat/completions   generation_handler.hpp
//   GET  /v1/models                                   {"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}
//   GET  /health                                      {"status": "ok"}
//   GET  /metrics                                     Prometheus text
// With --api-key, every /v1/ path needs "Authorization: Bearer KEY" (401 otherwise; /health and
// /metrics stay open). Every error is OpenAI's JSON {"error": {...}}: those of the handlers, and
// those httplib answers itself (404 for an unknown path, 413 for a body over --max-body, 400 for
// a malformed HTTP request) through the error handler. The logger counts answers for /metrics.
#pragma once

#include "generation_handler.hpp"
#include "openai_response.hpp"
#include "server_state.hpp"

#include <httplib.h>

#include <exception>
#include <string>

namespace server {

inline std::string endpoint_label(const std::string& path) {
    for (const char* known : {"/v1/completions", "/v1/chat/completions", "/v1/models", "/health", "/metrics"})
        if (path == known) return known;
    return "other";
}

inline bool authorized(const server_state& s, const httplib::Request& req) {
    if (s.api_key.empty() || req.path.rfind("/v1/", 0) != 0) return true;
    return req.get_header_value("Authorization") == "Bearer " + s.api_key;
}

inline void install_routes(httplib::Server& svr, server_state& s) {
    svr.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
        if (authorized(s, req)) return httplib::Server::HandlerResponse::Unhandled;
        res.set_header("WWW-Authenticate", "Bearer");
        send_error(res, 401, "invalid or missing API key: send the header 'Authorization: Bearer <key>'",
                   "invalid_request_error", {}, "invalid_api_key");
        return httplib::Server::HandlerResponse::Handled;
    });

    svr.Post("/v1/completions", [&s](const httplib::Request& req, httplib::Response& res) {
        handle_generation(s, endpoint::completions, req, res);
    });
    svr.Post("/v1/chat/completions", [&s](const httplib::Request& req, httplib::Response& res) {
        handle_generation(s, endpoint::chat, req, res);
    });
    svr.Get("/v1/models", [&s](const httplib::Request&, httplib::Response& res) {
        const json body = {
            {"object", "list"},
            {"data",
             json::array(
                 {{{"id", s.model->name}, {"object", "model"}, {"created", s.started}, {"owned_by", "nexttok"}}})}};
        res.set_content(dump(body), "application/json");
    });
    svr.Get("/health", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"status":"ok"})", "application/json");
    });
    svr.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
        res.set_content(s.stats->render(s.eng->gauges()), "text/plain; version=0.0.4; charset=utf-8");
    });

    // Answers httplib made without a body (and only those: the handlers' errors have theirs).
    svr.set_error_handler(
        httplib::Server::HandlerWithResponse([&s](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty() || res.is_chunked_content_provider_)
                return httplib::Server::HandlerResponse::Unhandled;
            switch (res.status) {
                case 404:
                    send_error(res, 404, "no endpoint " + req.method + " " + req.path, "invalid_request_error", {},
                               "not_found");
                    break;
                case 413:
                    send_error(res, 413,
                               "the request body is larger than " + std::to_string(s.max_body) + " bytes (--max-body)",
                               "invalid_request_error", {}, "payload_too_large");
                    break;
                default:
                    send_error(res, res.status, "HTTP error " + std::to_string(res.status), "invalid_request_error");
                    break;
            }
            return httplib::Server::HandlerResponse::Handled;
        }));
    svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
            if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = std::string("internal error: ") + e.what();
        } catch (...) {
        }
        send_error(res, 500, what, "server_error");
    });
    svr.set_logger([&s](const httplib::Request& req, const httplib::Response& res) {
        s.stats->count_request(endpoint_label(req.path), res.status);
    });
}

}  // namespace server
