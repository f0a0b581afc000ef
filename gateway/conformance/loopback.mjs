// Loaded with `node --import` into the reference server: it calls
// `app.listen(PORT)`, which binds every interface; tests listen on
// 127.0.0.1 only, so a listen without a host gets that one.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
