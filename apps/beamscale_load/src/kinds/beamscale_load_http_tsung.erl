%% @doc Tsung's `<http>' element for the `http' kind (and `http2' with `beamscale_version="2"'):
%% `url' (a path, or an absolute http[s] URL naming its target), `method', `version',
%% `contents' or `contents_from_file', `content_type', `if_modified_since', its `<http_header>'s
%% and `<soap>', and the request's `<dyn_variable>'s and `<match>'es.
-module(beamscale_load_http_tsung).

-export([tsung/0, from_tsung/4]).

%% The http kind's check of a method name: its bytes on the wire, or `bad'.
-type method_name() :: fun((string()) -> binary() | bad).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, fail/4]).

%% Tsung's common HTTP methods as atoms; any other (WebDAV's) stays text: no atom is made of a
%% file's text.
-define(TSUNG_METHODS, [get, head, post, put, delete, options, patch, trace, connect]).

%% @doc Tsung's `ts_http' sessions and their `<http>' element; `ts_webdav' sessions too, whose
%% `<http>' has WebDAV's methods (RFC 4918: PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK,
%% UNLOCK...) and headers (Depth, Destination, Overwrite, Lock-Token: `<http_header>'s), sent
%% as written, as Tsung's `ts_webdav' sends them.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_http", aliases => ["ts_webdav"], element => http,
             servers => ["tcp", "ssl"], options => ["user_agent"],
             attributes => [url, method, version, contents, contents_from_file, content_type,
                            if_modified_since, beamscale_version, beamscale_streams]}.

%% @doc `<http url method version contents content_type>' with its `<http_header>'s, its
%% `<soap>' and the request's `<dyn_variable>'s and `<match>'es; Tsung keeps every HTTP user's
%% cookies.
-spec from_tsung(#xmlElement{}, #xmlElement{}, map(), method_name()) ->
    {map(), [{atom(), map()}]}.
from_tsung(Req, E, Ctx, MethodName) ->
    {Spec, Used} = tsung_http(E, Ctx, MethodName),
    Keys = beamscale_load_tsung_dyn:request_keys(Req, E, Ctx),
    Spec1 = case lists:usort(expected(Keys) ++ webdav(Spec, Ctx)) of
                [] -> Spec;
                More -> Spec#{status => lists:usort([200 | More])}
            end,
    {maps:merge(Spec1#{cookies => true}, Keys), Used}.

%% WebDAV's answers of success (RFC 4918: 201 Created, 204 No Content, 207 Multi-Status), not
%% errors for a WebDAV method (a method that is not Tsung's `ts_http' one, kept as text) or
%% any request of a `ts_webdav' session, whose PUT creates (201) and DELETE answers 204.
webdav(#{method := M}, Ctx) ->
    Session = maps:get(session, Ctx, undefined),
    case is_list(M) orelse (Session =/= undefined andalso attr(Session, type) =:= "ts_webdav") of
        true -> [201, 204, 207];
        false -> []
    end.

%% Statuses the file's author expects besides 200, not errors (Tsung counts none as one): the
%% 401 of an authentication challenge whose header a `<dyn_variable>' reads, and a status line
%% a `<match when="match">' looks for (`HTTP/1.1 404').
expected(Keys) ->
    [401 || X <- maps:get(extract, Keys, []), element(1, X) =:= header,
            string:lowercase(element(3, X)) =:= "www-authenticate"] ++
        [list_to_integer(C) || #{re := Re, 'when' := match} <- maps:get(match, Keys, []),
                               {match, [C]} <- [re:run(Re, "HTTP/1[^ ]* +([1-5][0-9][0-9])",
                                                       [{capture, all_but_first, list}])]].

tsung_http(E, Ctx, MethodName) ->
    check_attrs(E, Ctx),
    Version = case attr(E, version, "1.1") of
                  V when V =:= "1.1"; V =:= "1.0" -> V;
                  V -> fail(E, Ctx, "version \"~ts\" is not supported (1.1 or 1.0)", [V])
              end,
    {Target, Path} = url(E, Ctx),
    Kids = children(E, beamscale_load_tsung_dyn:http_children(), Ctx),
    Headers = [{"Content-Type", CT} || CT <- [attr(E, content_type)], CT =/= undefined]
              ++ [{"If-Modified-Since", D} || D <- [attr(E, if_modified_since)], D =/= undefined]
              ++ [header(H, Ctx) || H <- Kids, H#xmlElement.name =:= http_header]
              ++ [soap(H, Ctx) || H <- Kids, H#xmlElement.name =:= soap]
              %% The session's pick of `<option name="user_agent">' (beamscale_load_tsung_xml).
              ++ [{"User-Agent", "%%_" ++ UA ++ "%%"}
                  || UA <- [maps:get(user_agent_var, Ctx, none)], UA =/= none],
    beamscale_load_tsung_dyn:calls(E, beamscale_load_tsung_request:values(E), Ctx),
    Spec0 = #{method => method(E, Ctx, MethodName), path => Path,
             headers => Headers,
             body => body(E, Ctx),
             target => element(1, Target)},
    Spec = case {Version, attr(E, beamscale_version)} of
               {_, "2"} -> Spec0#{kind => http2, streams => streams(E, Ctx)};
               {"1.1", undefined} -> Spec0;
               {_, undefined} -> Spec0#{version => Version};
               {_, B} -> fail(E, Ctx, "beamscale_version \"~ts\" is not supported (2)", [B])
           end,
    {Spec, [Target]}.

%% `beamscale_version="2"': the request in HTTP/2 (the http2 kind), on `beamscale_streams'
%% concurrent streams.
streams(E, Ctx) ->
    case attr(E, beamscale_streams) of
        undefined -> 1;
        _ -> beamscale_load_tsung_dom:positive_integer(E, beamscale_streams, Ctx)
    end.

%% `contents', or the bytes of the file `contents_from_file' names (sent as they are).
body(E, Ctx) ->
    case {attr(E, contents), attr(E, contents_from_file)} of
        {C, undefined} -> unicode:characters_to_binary(case C of undefined -> ""; _ -> C end);
        {undefined, _} -> beamscale_load_tsung_request:file_contents(E, contents_from_file, Ctx);
        _ -> fail(E, Ctx, "give contents or contents_from_file, not both", [])
    end.

%% `<soap action>': the SOAPAction header of a SOAP request.
soap(H, Ctx) ->
    check_attrs(H, Ctx),
    {"SOAPAction", req(H, action, Ctx)}.

method(E, Ctx, MethodName) ->
    M = attr(E, method, "GET"),
    case [A || A <- ?TSUNG_METHODS, atom_to_list(A) =:= string:lowercase(M)] of
        [A] -> A;
        [] ->
            case MethodName(M) of
                bad -> fail(E, Ctx, "method \"~ts\" is not an HTTP method name (up to 24 "
                                    "letters, digits and !#$%&'*+-.^_`|~~)",
                            [lists:sublist(M, 40)]);
                _ -> M
            end
    end.

header(H, Ctx) ->
    check_attrs(H, Ctx),
    {req(H, name, Ctx), encoded(H, req(H, value, Ctx), Ctx)}.

%% `encoding="base64"': the value sent is the Base64 of its UTF-8 bytes, made when the file is
%% read, as Tsung's reader makes it: before any `%%_name%%' could be filled, so a placeholder
%% would go encoded and unfilled; it is refused instead.
encoded(H, Value, Ctx) ->
    case {attr(H, encoding), string:find(Value, "%%")} of
        {undefined, _} -> Value;
        {"base64", nomatch} -> base64:encode_to_string(unicode:characters_to_binary(Value));
        {"base64", _} ->
            fail(H, Ctx, "<http_header encoding=\"base64\"> with %% in its value: Tsung encodes "
                         "the text as written, before any %%_name%% is filled; write the value "
                         "already encoded", []);
        {E, _} -> fail(H, Ctx, "<http_header encoding=\"~ts\"> (Tsung knows base64 only)", [E])
    end.

%% A relative URL goes to the host of the last absolute one before it in its session (in the
%% file's order, as Tsung's reader keeps it), else to the `<server>'; an absolute one
%% (http[s]://host[:port]/path) to its host (https: TLS, the certificate not checked, as Tsung
%% does).
url(E, Ctx) -> url(E, req(E, url, Ctx), Ctx).

url(E, "/" ++ _ = Path, Ctx) ->
    case beamscale_load_tsung_request:previous_url(E, Ctx) of
        none -> {beamscale_load_tsung_request:server(E, Ctx), Path};
        {Prev, Url} -> {element(1, url(Prev, Url, Ctx)), Path}
    end;
url(E, "http://" ++ Rest, Ctx) -> absolute(E, Ctx, Rest, "80", "", #{});
url(E, "https://" ++ Rest, Ctx) ->
    absolute(E, Ctx, Rest, "443", "https://", #{tls => beamscale_load_tsung_request:tls()});
url(E, Url, Ctx) ->
    fail(E, Ctx, "url \"~ts\" is not supported (a path, or http[s]://host:port/path)", [Url]).

absolute(E, Ctx, Rest, DefaultPort, Scheme, Extra) ->
    {HostPort, Path} = case string:split(Rest, "/") of
                           [HP, P] -> {HP, "/" ++ P};
                           [HP] -> {HP, "/"}
                       end,
    Address = case string:split(HostPort, ":") of
                  [_, _] -> HostPort;
                  [_] -> HostPort ++ ":" ++ DefaultPort
              end,
    {{beamscale_load_tsung_request:atom(E, url, Scheme ++ Address, Ctx),
      Extra#{address => Address}}, Path}.
