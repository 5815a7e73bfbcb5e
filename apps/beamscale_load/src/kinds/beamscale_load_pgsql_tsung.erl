%% @doc Tsung's `ts_pgsql' requests translated (pure) into `pgsql' steps: `<pgsql type="connect"
%% database username>', `type="authenticate" password', `type="sql"' (the query as the element's
%% text), the extended flow's `type="parse" name_prepared' (the query as text or `query'),
%% `type="bind" name_portal name_prepared parameters' (values separated by commas),
%% `type="describe" name_portal|name_prepared', `type="execute" name_portal max_rows',
%% `type="sync"', `type="close"', `type="flush"', and a COPY FROM STDIN's `type="copy"' (its
%% bytes as Tsung writes them, decimal values separated by commas, or `contents_from_file'),
%% `type="copydone"' and `type="copyfail"' (the reason as text or `query'). `cancel' and `call'
%% are in the DTD but Tsung 1.7's reader has no request for them: refused. Part of
%% `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_pgsql_tsung).

-export([spec/2]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [attr/2, attr/3, req/3, fail/4, type/3]).

%% The largest `contents_from_file' read, as a reply's default bound.
-define(MAX_CONTENTS, 16 * 1024 * 1024).

%% @doc The `pgsql' step's spec (without its target) of a `<pgsql>' element.
-spec spec(#xmlElement{}, map()) -> map().
spec(E, Ctx) ->
    [fail(E, Ctx, "<pgsql type=\"~ts\">: Tsung 1.7's reader has no such request (its DTD "
                  "names it, its ts_config_pgsql stops on it)", [T])
     || T <- [attr(E, type)], T =:= "cancel" orelse T =:= "call"],
    Type = type(E, Ctx, ["connect", "authenticate", "sql", "parse", "bind", "describe",
                         "execute", "sync", "close", "flush", "copy", "copydone", "copyfail"]),
    [fail(E, Ctx, "~ts=\"~ts\": beamscale sends parameters and takes results as text",
          [A, V]) || A <- [formats, formats_results], V <- [attr(E, A)], V =/= undefined,
                     not lists:member(V, ["none", "text", ""])],
    case Type of
        "connect" -> #{type => connect, database => bin(req(E, database, Ctx)),
                       username => bin(req(E, username, Ctx))};
        "authenticate" -> #{type => authenticate, password => bin(req(E, password, Ctx))};
        "sql" -> #{type => sql, sql => query(E, Ctx)};
        "parse" -> #{type => parse, sql => query(E, Ctx), name => name(E, name_prepared)};
        "bind" -> #{type => bind, portal => name(E, name_portal),
                    name => name(E, name_prepared), parameters => parameters(E)};
        "describe" -> describe(E);
        "execute" -> #{type => execute, portal => name(E, name_portal),
                       max_rows => max_rows(E, Ctx)};
        "sync" -> #{type => sync};
        "close" -> #{type => close};
        "flush" -> #{type => flush};
        "copy" -> #{type => copy, data => contents(E, Ctx)};
        "copydone" -> #{type => copydone};
        "copyfail" -> #{type => copyfail, message => bin(case {text(E), attr(E, query)} of
                                                             {"", undefined} -> "copyfail";
                                                             {"", Q} -> Q;
                                                             {T, _} -> T
                                                         end)}
    end.

%% Tsung's: the bytes as decimal numbers separated by commas, or a file's whole contents
%% (relative to the Tsung file's directory here, bounded).
contents(E, Ctx) ->
    case attr(E, contents_from_file) of
        undefined ->
            try << <<(byte(string:trim(N))):8>>
                   || N <- string:split(text(E), ",", all), string:trim(N) =/= "" >>
            catch error:_ ->
                    fail(E, Ctx, "<pgsql type=\"copy\">: expected bytes as decimal numbers "
                                 "separated by commas (0 to 255), as Tsung reads them", [])
            end;
        F ->
            Path = filename:absname(F, filename:dirname(filename:absname(maps:get(file, Ctx)))),
            case beamscale_format_file:read(Path, ?MAX_CONTENTS) of
                {ok, B} -> B;
                {error, Why} -> fail(E, Ctx, "contents_from_file=\"~ts\": ~ts",
                                     [F, beamscale_format_file:format_error(Why)])
            end
    end.

byte(S) ->
    case list_to_integer(S) of
        N when N >= 0, N =< 255 -> N
    end.

bin(S) -> unicode:characters_to_binary(S).

name(E, Attr) -> bin(attr(E, Attr, "")).

query(E, Ctx) ->
    case {text(E), attr(E, query)} of
        {"", undefined} -> fail(E, Ctx, "<pgsql type=\"~ts\"> needs the query as its text",
                                [attr(E, type)]);
        {"", Q} -> bin(Q);
        {T, _} -> bin(T)
    end.

text(E) -> string:trim(beamscale_load_tsung_request:text(E)).

parameters(E) ->
    case attr(E, parameters) of
        undefined -> [];
        Ps -> [bin(P) || P <- string:split(Ps, ",", all)]
    end.

describe(E) ->
    case attr(E, name_prepared) of
        undefined -> #{type => describe, portal => name(E, name_portal)};
        N -> #{type => describe, name => bin(N)}
    end.

max_rows(E, Ctx) ->
    case string:to_integer(attr(E, max_rows, "0")) of
        {N, ""} when N >= 0, N < 1 bsl 31 -> N;
        _ -> fail(E, Ctx, "max_rows=\"~ts\" (expected an integer from 0)", [attr(E, max_rows)])
    end.
