%% @doc `beamscale record': a browsing session written as a scenario (docs/record.md), through
%% the recording proxy `beamscale_record'.
-module(beamscale_cmd_record).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "record", summary => "record browsing through an HTTP proxy as a scenario",
      usage => "beamscale record [--port PORT] [--out BASE] [--duration SECONDS]",
      details => "Listens on 127.0.0.1:PORT as an HTTP proxy; point the browser at it\n"
                 "(chromium --proxy-server=http://127.0.0.1:PORT "
                 "--proxy-bypass-list='<-loopback>').\nAfter every request BASE.xml (Tsung) and "
                 "BASE.scenario (terms) hold the session so far.\nEnds "
                 "after --duration, or on Ctrl-C. HTTPS through CONNECT: the proxy\nsigns a "
                 "certificate per host with its CA, made once in --ca-dir;\n"
                 "it prints how to trust that CA.",
      options => [{port, "--port", integer, "the proxy's port on 127.0.0.1", {value, 8090}},
                  {out, "--out", string, "BASE of BASE.xml and BASE.scenario",
                   {value, "recorded"}},
                  {ca_dir, "--ca-dir", string, "where the proxy's CA is kept (made if absent)",
                   {text, "BASE's directory"}},
                  {duration, "--duration", integer, "seconds to record",
                   {text, "until Ctrl-C"}}]}.

%% @doc Record until the duration ends or the command is interrupted.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{opts := Opts, args := []}) ->
    Spec = maps:get(options, info()),
    Base = beamscale_args:get(out, Opts, Spec),
    Start = maps:merge(#{port => beamscale_args:get(port, Opts, Spec), base => Base},
                       maps:with([ca_dir], Opts)),
    case beamscale_record:start(Start) of
        {ok, Proxy} ->
            Port = beamscale_record:port(Proxy),
            io:format("~ts", [beamscale_record_ca:trust_text(beamscale_record:ca(Proxy), Port)]),
            io:format("recording through the HTTP proxy 127.0.0.1:~b into ~ts.xml and "
                      "~ts.scenario~n(chromium --proxy-server=http://127.0.0.1:~b "
                      "--proxy-bypass-list='<-loopback>'); Ctrl-C ends it~n",
                      [Port, Base, Base, Port]),
            case maps:find(duration, Opts) of
                {ok, S} when S > 0 -> timer:sleep(S * 1000);
                {ok, _} -> ok;
                error -> receive after infinity -> ok end
            end,
            io:format("~b requests recorded: ~ts.xml, ~ts.scenario~n",
                      [beamscale_record:stop(Proxy), Base, Base]);
        {error, Why} -> {error, Why}
    end;
do(#{args := Args}) -> {error, {usage, Args}}.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({listen, Why}) -> ["cannot listen on 127.0.0.1: ", inet:format_error(Why)];
format_error({usage, Args}) -> ["no arguments expected, not: ", lists:join(" ", Args)];
format_error(Why) -> io_lib:format("~0tp", [Why]).
