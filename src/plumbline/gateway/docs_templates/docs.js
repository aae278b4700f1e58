// Starts Swagger UI on the description named by #swagger-ui's data-spec attribute.
// A file rather than an inline script, so the page's Content-Security-Policy can
// allow scripts from this server only. The session cookie authenticates the
// description and "Try it out" requests (same origin).
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec"),
    domNode: root,
    deepLinking: true,
    // The default badge sends the description's URL to validator.swagger.io.
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor: function (request) {
      request.credentials = "same-origin";
      return request;
    },
  });
})();
