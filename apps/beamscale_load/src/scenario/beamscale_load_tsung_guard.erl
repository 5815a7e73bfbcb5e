%% @private Checks on Tsung XML text before xmerl reads it (docs/scenario.md, "What is
%% refused"). xmerl expands the entities a DTD's internal subset declares without bound (the
%% "billion laughs" grew a node to 7.6 GB) and turns every element, attribute and processing
%% instruction name into an atom. So, before it reads anything: a `<!DOCTYPE>' with an internal
%% subset `[...]', any other declaration and any entity reference but the five predefined ones and
%% character references are refused; and every name must be one of Tsung's (tsung-1.0.dtd, plus
%% the thesis's `<rpc>'), atoms that already exist, so xmerl creates none.
-module(beamscale_load_tsung_guard).

-export([check/1, names/0]).

%% Every element of tsung-1.0.dtd, and `rpc' (the thesis's), `tcp' and `udp' (named in refusals).
-define(ELEMENTS, [
    abort, add_cookie, amqp, arrivalphase, attr, certificate, change_type, client, clients,
    description, dyn_variable, 'for', foreach, fs, http, http_header, 'if', information,
    interaction, ip, iprange, jabber, job, ldap, load, match, modification, monitor, monitoring,
    mqtt, munin, mysql, mysqladmin, name, oauth, oid, option, options, organisation, pgsql, raw,
    repeat, request, rpc, server, servers, session, session_setup, sessions, set_option,
    setdynvars, shell, snmp, soap, tcp, thinktime, transaction, tsung, udp, until, user,
    user_agent, username, users, value, var, websocket, while, www_authenticate,
    xmpp_authenticate]).
%% Every attribute of tsung-1.0.dtd, those of <rpc>, and beamscale's own on <http> (HTTP/2).
-define(ATTRIBUTES, [
    access_token, access_token_secret, ack, action, apply_to_content, args, arguments,
    arrivalrate, backend, base, batch, beamscale_streams, beamscale_version, bidi, cacertfile,
    callback, certfile, channel, clean_start,
    cmd, cnonce, code, community, consumer_key, consumer_secret, content_type, contents,
    contents_from_file, cpu, data, database, datasize, decode, delimiter, dest, destination, dn,
    do, domain, dumptraffic, duration, encoding, 'end', eq, eval, exchange, exclude, expect, fileid,
    filter, formats, formats_results, frame, from, function, group, gt, gte, header, host, id,
    if_modified_since, in, include, incr, interarrival, jobid, jsonpath, keepalive, key, keyfile,
    keypass, length, loglevel, loop, loop_back, lt, lte, max, max_loop, max_repeat, max_restart,
    max_rows, maxnumber, maxusers, method, min, mode, module, name, name_portal, name_prepared,
    nc, neq, new_type, nick, node, node_type, nodes, nonce, notify_port, notify_script, opaque,
    options, order, origin, override, parameters, passwd, password, path, payload, payload_size,
    persistent, pgsql_expr, phase, port, position, prefetch_count, prefetch_size, probability,
    qop, qos, 'query', queue, random, re, realm, regexp, req, resource, resources, restore,
    result_var, retained, room, routing_key, scan, scan_intf, scope, script, send_version,
    server_type, session, show, size, skip_headers, sleep_loop, sourcetype, stamped, start,
    start_time, status, store, subid, subprotocols, subst, tag, timeout, to, topic, type, unit,
    url, use_controller_vm, user, userid, username, value, var, version, vhost,
    wait_all_sessions_end, walltime, weight, 'when', will_msg, will_qos, will_retain, will_topic,
    xpath]).
%% `<?xml ...?>', the file's own `<?beamscale target ...?>' and a stylesheet.
-define(PIS, [xml, beamscale, 'xml-stylesheet']).
-define(PREDEFINED, ["lt", "gt", "amp", "quot", "apos"]).
%% Names in messages are cut to this many characters (one line).
-define(SHOWN, 40).

%% @doc The element and attribute names taken as Tsung's (the DTD walk test checks them).
-spec names() -> {[atom()], [atom()]}.
names() -> {?ELEMENTS, ?ATTRIBUTES}.

%% @doc `ok', or the line and reason of the first thing refused.
-spec check(string()) -> ok | {error, {pos_integer(), string()}}.
check(Text) ->
    Known = maps:from_list([{{K, atom_to_list(A)}, true}
                            || {K, As} <- [{element, ?ELEMENTS}, {attribute, ?ATTRIBUTES},
                                           {pi, ?PIS}],
                               A <- As]),
    try scan(Text, 1, Known)
    catch throw:{guard, Line, Msg} -> {error, {Line, lists:flatten(Msg)}}
    end.

scan([], _L, _K) -> ok;
scan("<!--" ++ R, L, K) -> skip_to("-->", R, L, K, fun scan/3);
scan("<![CDATA[" ++ R, L, K) -> skip_to("]]>", R, L, K, fun scan/3);
scan("<!DOCTYPE" ++ R, L, K) ->
    {Name, R1, L1} = name(skip_space(R, L), K),
    known(element, Name, L1, K),
    doctype(R1, L1, K);
scan("<!" ++ R, L, _K) ->
    refuse(L, "<!~ts ...> is refused: beamscale reads no declarations (entities could expand "
              "without bound)", [show(R)]);
scan("<?" ++ R, L, K) ->
    {Name, R1, L1} = name({R, L}, K),
    known(pi, Name, L1, K),
    skip_to("?>", R1, L1, K, fun scan/3);
scan("</" ++ R, L, K) ->
    {Name, R1, L1} = name({R, L}, K),
    known(element, Name, L1, K),
    scan(R1, L1, K);
scan("<" ++ R, L, K) ->
    {Name, R1, L1} = name({R, L}, K),
    known(element, Name, L1, K),
    attributes(R1, L1, K);
scan("&" ++ R, L, K) -> scan(reference(R, L), L, K);
scan("\n" ++ R, L, K) -> scan(R, L + 1, K);
scan([_ | R], L, K) -> scan(R, L, K).

%% After the DOCTYPE's name: an external id (quoted), then `>'; `[' opens an internal subset.
doctype([], L, _K) -> refuse(L, "not well-formed XML: the file ends inside <!DOCTYPE>", []);
doctype(">" ++ R, L, K) -> scan(R, L, K);
doctype("[" ++ R, L, K) ->
    %% An empty subset (some of Tsung's examples have `[]') declares nothing.
    case skip_space(R, L) of
        {"]" ++ R1, L1} -> doctype(R1, L1, K);
        _ -> internal_subset(L)
    end;
doctype([Q | R], L, K) when Q =:= $"; Q =:= $' ->
    {R1, L1} = quoted(Q, R, L, fun(_, _) -> ok end),
    doctype(R1, L1, K);
doctype("\n" ++ R, L, K) -> doctype(R, L + 1, K);
doctype([_ | R], L, K) -> doctype(R, L, K).

-spec internal_subset(pos_integer()) -> no_return().
internal_subset(L) ->
    refuse(L, "<!DOCTYPE [...]> with an internal subset is refused: its entity declarations "
              "could expand without bound (Tsung's files need none)", []).

%% The attributes of a start tag up to its end.
attributes(R0, L0, K) ->
    case skip_space(R0, L0) of
        {">" ++ R, L} -> scan(R, L, K);
        {"/>" ++ R, L} -> scan(R, L, K);
        {[], L} -> refuse(L, "not well-formed XML: the file ends inside a tag", []);
        {R, L} ->
            {Name, R1, L1} = name({R, L}, K),
            known(attribute, Name, L1, K),
            case skip_space(R1, L1) of
                {"=" ++ R2, L2} ->
                    case skip_space(R2, L2) of
                        {[Q | R3], L3} when Q =:= $"; Q =:= $' ->
                            {R4, L4} = quoted(Q, R3, L3, fun value_char/2),
                            attributes(R4, L4, K);
                        {_, L3} -> refuse(L3, "not well-formed XML: ~ts= needs a quoted value",
                                          [show(Name)])
                    end;
                {_, L2} -> refuse(L2, "not well-formed XML: attribute ~ts needs =", [show(Name)])
            end
    end.

%% A quoted value up to its closing quote; `Check(Char, Line)' sees each character.
quoted(_Q, [], L, _Check) -> refuse(L, "not well-formed XML: the file ends inside a value", []);
quoted(Q, [Q | R], L, _Check) -> {R, L};
quoted(Q, "\n" ++ R, L, Check) -> quoted(Q, R, L + 1, Check);
quoted(Q, "&" ++ R, L, Check) -> quoted(Q, reference(R, L), L, Check);
quoted(Q, [C | R], L, Check) -> Check(C, L), quoted(Q, R, L, Check).

value_char($<, L) -> refuse(L, "not well-formed XML: < in an attribute value", []);
value_char(_, _) -> ok.

%% After `&': a character reference or one of the five predefined entities.
reference("#" ++ R, _L) -> R;
reference(R, L) ->
    {Name, Rest} = lists:splitwith(fun(C) -> C =/= $; andalso not space(C) end, R),
    case {lists:member(Name, ?PREDEFINED), Rest} of
        {true, ";" ++ After} -> After;
        _ -> refuse(L, "entity reference &~ts; is refused (only &lt; &gt; &amp; &quot; &apos; "
                       "and character references: beamscale reads no entity declarations)",
                    [show(Name)])
    end.

name({R, L}, _K) ->
    case lists:splitwith(fun name_char/1, R) of
        {[], _} -> refuse(L, "not well-formed XML: a name is expected after <", []);
        {Name, Rest} -> {Name, Rest, L}
    end.

name_char(C) -> not (space(C) orelse lists:member(C, "<>/=?\"'&[]")).

space(C) -> C =:= $\s orelse C =:= $\t orelse C =:= $\r orelse C =:= $\n.

skip_space("\n" ++ R, L) -> skip_space(R, L + 1);
skip_space([C | R], L) when C =:= $\s; C =:= $\t; C =:= $\r -> skip_space(R, L);
skip_space(R, L) -> {R, L}.

%% Skip to the end of a comment, CDATA section or processing instruction; one left open is said
%% by xmerl.
skip_to(End, R, L, K, Next) ->
    case string:split(R, End) of
        [Skipped, Rest] -> Next(Rest, L + count_lines(Skipped), K);
        [_] -> ok
    end.

count_lines(S) -> length([C || C <- S, C =:= $\n]).

known(Kind, Name, L, K) ->
    case maps:is_key({Kind, Name}, K) of
        true -> ok;
        false -> refuse(L, "~ts ~ts is not one of Tsung's (tsung-1.0.dtd): refused",
                        [kind(Kind), show(Name)])
    end.

kind(element) -> "element";
kind(attribute) -> "attribute";
kind(pi) -> "processing instruction".

show(S) ->
    {Word, _} = lists:splitwith(fun name_char/1, S),
    case length(Word) > ?SHOWN of
        true -> [lists:sublist(Word, ?SHOWN), "..."];
        false -> Word
    end.

-spec refuse(pos_integer(), string(), list()) -> no_return().
refuse(L, Fmt, Args) -> throw({guard, L, io_lib:format(Fmt, Args)}).
