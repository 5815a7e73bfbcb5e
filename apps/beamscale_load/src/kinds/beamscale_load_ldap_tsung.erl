%% @doc Tsung's `ts_ldap' requests translated (pure) into `ldap' steps: `<ldap type="bind" user
%% password>', `type="search" base filter scope' (all attributes asked, as Tsung does),
%% `type="add" dn' with `<attr type><value>...',
%% `type="modify" dn' with `<modification type="add|delete|replace">' holding `<attr>'s (an empty
%% one changes nothing, as in Tsung), `type="delete" dn' (ours), `type="start_tls" [cacertfile]'
%% and `type="unbind"'. Part of `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_ldap_tsung).

-export([spec/2]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [attr/2, attr/3, req/3, fail/4, type/3]).
-import(beamscale_load_tsung_request, [text/1]).

%% @doc The `ldap' step's spec (without its target) of an `<ldap>' element.
-spec spec(#xmlElement{}, map()) -> map().
spec(E, Ctx) ->
    Type = type(E, Ctx, ["bind", "search", "add", "modify", "delete", "start_tls", "unbind"]),
    case Type of
        "bind" -> #{type => bind, dn => bin(req(E, user, Ctx)),
                    password => bin(req(E, password, Ctx))};
        "search" ->
            #{type => search, base => bin(req(E, base, Ctx)), filter => bin(req(E, filter, Ctx)),
              scope => scope(attr(E, scope, "wholeSubtree"), E, Ctx)};
        "add" -> #{type => add, dn => bin(req(E, dn, Ctx)), attrs => attrs(E, Ctx)};
        "modify" -> #{type => modify, dn => bin(req(E, dn, Ctx)), changes => changes(E, Ctx)};
        "delete" -> #{type => delete, dn => bin(req(E, dn, Ctx))};
        "unbind" -> #{type => unbind};
        "start_tls" -> start_tls(E)
    end.

bin(S) -> unicode:characters_to_binary(S).

scope(S, _E, _Ctx) when S =:= "baseObject"; S =:= "singleLevel"; S =:= "wholeSubtree" ->
    list_to_atom(S);
scope(S, E, Ctx) ->
    fail(E, Ctx, "scope=\"~ts\" (expected baseObject, singleLevel or wholeSubtree)", [S]).

%% Tsung's client checks no certificate (its ssl:connect has no verify); a cacertfile given
%% is used to verify the server, as its name says. Client certificates are not offered
%% (`beamscale_load_tsung_dom' refuses certfile and keyfile).
start_tls(E) ->
    #{type => start_tls,
      tls => case attr(E, cacertfile) of
                 undefined -> #{verify => verify_none};
                 Ca -> #{verify => verify_peer, cacertfile => Ca}
             end}.

attrs(E, Ctx) -> [attr_values(A, Ctx) || A <- kids(E, attr, Ctx)].

attr_values(A, Ctx) ->
    only(A, [type], Ctx),
    Values = [begin only(V, [], Ctx), bin(text(V)) end || V <- kids(A, value, Ctx)],
    {bin(req(A, type, Ctx)), Values}.

changes(E, Ctx) ->
    [{op(M, Ctx), T, Vs} || M <- kids(E, modification, Ctx), begin only(M, [type], Ctx), true end,
                            {T, Vs} <- attrs(M, Ctx)].

op(M, Ctx) ->
    case req(M, type, Ctx) of
        "add" -> add;
        "delete" -> delete;
        "replace" -> replace;
        T -> fail(M, Ctx, "type=\"~ts\" (expected add, delete or replace)", [T])
    end.

%% The child elements named `Name' (others refused), blank text skipped.
kids(#xmlElement{content = C} = E, Name, Ctx) ->
    [case X of
         #xmlElement{name = Name} -> X;
         #xmlElement{name = N} -> fail(X, Ctx, "<~ts> in <~ts> (expected <~ts>)",
                                       [N, E#xmlElement.name, Name])
     end || X <- C, is_record(X, xmlElement)].

%% `<attr>', `<value>' and `<modification>' take only the attributes named.
only(#xmlElement{attributes = As} = E, Allowed, Ctx) ->
    [fail(E, Ctx, "attribute ~ts is not allowed on <~ts>", [N, E#xmlElement.name])
     || #xmlAttribute{name = N} <- As, not lists:member(N, Allowed)],
    ok.
